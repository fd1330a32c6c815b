"""Who may start a debate right now: one per channel, a cap per server/workspace and overall, a
per-user cooldown.

A start takes a `Slot` with `Admission.reserve`, synchronously, before anything awaits: the slot
counts against every limit at once (so N simultaneous starts cannot all pass a check that only
later records them) and starts the person's cooldown. The front end marks the slot `started()` once
the debate runs (from then on the running debate itself counts), or leaves it, which releases it and
gives the cooldown back. Use it as a context manager so a failed start always releases:

    with admission.reserve(platform=..., scope=..., channel=..., user=...) as slot:
        handle = await start(...)
        slot.started()

Platform permission checks (roles, user groups) stay in the adapters; these rules are the same
everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import TracebackType

from core.clock import Clock
from core.errors import TOO_MANY_DEBATES, AdmissionError
from core.manager import DebateManager
from core.settings import LimitsSettings


@dataclass(eq=False)
class Slot:
    """A start in progress, counted against every limit until it has started or is released."""

    platform: str
    scope: str
    channel: str
    user: str
    _admission: Admission = field(repr=False)
    _previous_start: float | None = field(repr=False)
    _at: float = field(repr=False)
    _open: bool = field(default=True, repr=False)

    def started(self) -> None:
        """The debate runs (and counts itself from now on); the cooldown stays."""
        if self._open:
            self._open = False
            self._admission._pending.discard(self)

    def release(self) -> None:
        """The start failed: free the slot and give the person their cooldown back."""
        if self._open:
            self._open = False
            self._admission._give_back(self)

    def __enter__(self) -> Slot:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


class Admission:
    def __init__(self, manager: DebateManager, clock: Clock, limits: LimitsSettings) -> None:
        self._manager = manager
        self._clock = clock
        self._limits = limits
        self._last_start: dict[tuple[str, str], float] = {}
        self._pending: set[Slot] = set()

    def reserve(self, *, platform: str, scope: str, channel: str, user: str) -> Slot:
        """Take a slot for a start, or raise AdmissionError (with a message for the person).

        Synchronous on purpose: the check and the reservation happen with no await in between.
        """
        self._check(platform=platform, scope=scope, channel=channel, user=user)
        key = (platform, user)
        now = self._clock.now()
        slot = Slot(platform, scope, channel, user, self, self._last_start.get(key), now)
        self._last_start[key] = now
        self._pending.add(slot)
        return slot

    def pending(self) -> int:
        """Starts reserved and not yet running or released."""
        return len(self._pending)

    def _check(self, *, platform: str, scope: str, channel: str, user: str) -> None:
        existing = self._manager.find(platform=platform, channel=channel)
        if existing is not None:
            raise AdmissionError(
                f"A debate is already running here ({existing.spec.topic!r}); stop it first or"
                " start one in another channel."
            )
        if any(s.platform == platform and s.channel == channel for s in self._pending):
            raise AdmissionError("A debate is being started in this channel right now; wait a moment.")
        running = self._manager.running()
        in_scope = [h for h in running if h.binding.platform == platform and h.binding.scope == scope]
        starting = [s for s in self._pending if s.platform == platform and s.scope == scope]
        if len(in_scope) + len(starting) >= self._limits.max_debates_per_scope:
            raise AdmissionError(
                f"This server already has {len(in_scope) + len(starting)} debates running (the limit is"
                f" {self._limits.max_debates_per_scope}); try again when one ends."
            )
        if len(running) + len(self._pending) >= self._limits.max_concurrent_debates:
            raise AdmissionError(TOO_MANY_DEBATES)
        self._manager.spending.check(platform=platform, scope=scope)  # daily budgets in money (core.spending)
        last = self._last_start.get((platform, user))
        if last is not None:
            wait = self._limits.user_cooldown - (self._clock.now() - last)
            if wait > 0:
                raise AdmissionError(f"You started a debate moments ago; try again in {math.ceil(wait)} s.")

    def _give_back(self, slot: Slot) -> None:
        self._pending.discard(slot)
        key = (slot.platform, slot.user)
        if self._last_start.get(key) != slot._at:
            return  # a later start by the same person holds the cooldown now
        if slot._previous_start is None:
            self._last_start.pop(key, None)
        else:
            self._last_start[key] = slot._previous_start
