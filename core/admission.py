"""Who may start a debate right now: one per channel, a cap per server/workspace, a per-user cooldown.

Platform permission checks (roles, user groups) stay in the adapters; these rules are the same
everywhere.
"""

from __future__ import annotations

import math

from core.clock import Clock
from core.errors import AdmissionError
from core.manager import DebateManager
from core.settings import LimitsSettings


class Admission:
    def __init__(self, manager: DebateManager, clock: Clock, limits: LimitsSettings) -> None:
        self._manager = manager
        self._clock = clock
        self._limits = limits
        self._last_start: dict[tuple[str, str], float] = {}

    def check(self, *, platform: str, scope: str, channel: str, user: str) -> None:
        """Raise AdmissionError (with a message for the person) when a start is not allowed."""
        existing = self._manager.find(platform=platform, channel=channel)
        if existing is not None:
            raise AdmissionError(
                f"A debate is already running here ({existing.spec.topic!r}); stop it first or"
                " start one in another channel."
            )
        in_scope = [
            h for h in self._manager.running() if h.binding.platform == platform and h.binding.scope == scope
        ]
        if len(in_scope) >= self._limits.max_debates_per_scope:
            raise AdmissionError(
                f"This server already has {len(in_scope)} debates running (the limit is"
                f" {self._limits.max_debates_per_scope}); try again when one ends."
            )
        self._manager.spending.check(platform=platform, scope=scope)  # daily budgets in money (core.spending)
        last = self._last_start.get((platform, user))
        if last is not None:
            wait = self._limits.user_cooldown - (self._clock.now() - last)
            if wait > 0:
                raise AdmissionError(f"You started a debate moments ago; try again in {math.ceil(wait)} s.")

    def record_start(self, *, platform: str, user: str) -> None:
        self._last_start[(platform, user)] = self._clock.now()
