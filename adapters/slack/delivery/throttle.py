"""Paces interim edits (streamed text, live status) to one per interval per debate.

`chat.update` is rate-limited per workspace, so a debate's interim edits share one rate window. An
interim edit that comes too soon waits, and a newer one for the same message replaces it; a final
edit (or a post or delete) of that message makes it moot.
"""

from __future__ import annotations

from collections.abc import Callable

from adapters.slack.render.ops import Update


class EditThrottle:
    def __init__(self, interval: float, now: Callable[[], float]) -> None:
        self.interval = interval
        self._now = now
        self._last = float("-inf")
        self._pending: dict[str, Update] = {}

    def offer(self, op: Update) -> bool:
        """True: send `op` now. False: it waits (replacing an older wait for the same message)."""
        if not self._pending and self._now() - self._last >= self.interval:
            self._last = self._now()
            return True
        self._pending.pop(op.key, None)
        self._pending[op.key] = op
        return False

    def hold(self, op: Update) -> None:
        """`op` could not go now (the rate window is short): it waits, coalesced with newer ones."""
        self._last = self._now()
        self._pending.pop(op.key, None)
        self._pending[op.key] = op

    def drop(self, key: str) -> None:
        self._pending.pop(key, None)

    def next_due(self) -> float | None:
        """Seconds until the next waiting edit is due; None when nothing waits."""
        if not self._pending:
            return None
        return max(0.0, self._last + self.interval - self._now())

    def take_due(self) -> list[Update]:
        """The waiting edit that is due now, if any (one per interval: they share one rate window)."""
        if not self._pending or self._now() - self._last < self.interval:
            return []
        key = next(iter(self._pending))
        self._last = self._now()
        return [self._pending.pop(key)]

    def take_all(self) -> list[Update]:
        waiting = list(self._pending.values())
        self._pending.clear()
        return waiting
