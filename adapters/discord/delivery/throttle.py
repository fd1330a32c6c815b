"""Holding back interim edits so one message is edited at most about once per interval.

Only the newest interim state of a slot is kept; a final state replaces it and goes out at once.
Streamed persona text (a turn's messages) is held to at least `persona_floor` between edits
whatever the configured interval: those edits share the channel's webhook rate window.
"""

from __future__ import annotations

from collections.abc import Callable

from adapters.discord.render.ops import Show


class EditThrottle:
    def __init__(self, interval: float, now: Callable[[], float], *, persona_floor: float = 0.0) -> None:
        self._interval = interval
        self._persona_interval = max(interval, persona_floor)
        self._now = now
        self._last: dict[str, float] = {}
        self._held: dict[str, Show] = {}
        self._persona: set[str] = set()  # slots that show a persona's words

    def _interval_of(self, slot: str) -> float:
        return self._persona_interval if slot in self._persona else self._interval

    def offer(self, show: Show, *, first: bool) -> Show | None:
        """The update to apply now, or None when it is held back (`first`: nothing shown yet)."""
        if any(p.persona is not None for p in show.posts):
            self._persona.add(show.slot)
        if not show.live:
            self._held.pop(show.slot, None)
            return show
        if first or self._now() - self._last.get(show.slot, float("-inf")) >= self._interval_of(show.slot):
            self._held.pop(show.slot, None)
            return show
        self._held[show.slot] = show
        return None

    def hold(self, show: Show) -> None:
        """`show` could not go now (the rate window is short): it waits, coalesced with newer ones."""
        self._last[show.slot] = self._now()
        self._held[show.slot] = show

    def applied(self, slot: str) -> None:
        """Record that `slot` was just posted or edited."""
        self._last[slot] = self._now()

    def next_due(self) -> float | None:
        """Seconds until the earliest held update may go out (0 if one is due), None if none is held."""
        if not self._held:
            return None
        now = self._now()
        return max(0.0, min(self._last.get(s, now) + self._interval_of(s) - now for s in self._held))

    def take_due(self) -> list[Show]:
        """The held updates whose time has come (they are no longer held)."""
        now = self._now()
        due = [
            show
            for slot, show in self._held.items()
            if now - self._last.get(slot, float("-inf")) >= self._interval_of(slot)
        ]
        for show in due:
            del self._held[show.slot]
        return due

    def take_all(self) -> list[Show]:
        """Everything held, in the order it was held (used when closing)."""
        held = list(self._held.values())
        self._held.clear()
        return held
