"""Time, injectable: a real clock, a fake one for tests and `--fast`, and the debate clock.

The debate clock counts debate time only: elapsed = now - start - paused.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    """Wall time as the event loop sees it (so loop-level time control applies to it too)."""

    def now(self) -> float:
        try:
            return asyncio.get_running_loop().time()
        except RuntimeError:
            return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """Virtual time that jumps forward when someone sleeps.

    Sleepers that start together share their base time, so four voters sleeping one second
    in parallel advance the clock by one second, not four. A 300 s debate runs in milliseconds.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += max(0.0, seconds)

    async def sleep(self, seconds: float) -> None:
        deadline = self._now + max(0.0, seconds)
        # Let peers that were started alongside this one register their own deadlines first.
        for _ in range(10):
            await asyncio.sleep(0)
        self._now = max(self._now, deadline)
        await asyncio.sleep(0)


class DebateClock:
    """Debate time with pauses (votes pause it); `duration` None means no limit."""

    def __init__(
        self, clock: Clock, duration: float | None, *, elapsed: float = 0.0, paused: float = 0.0
    ) -> None:
        self._clock = clock
        self.duration = duration
        self._start = clock.now() - elapsed - paused
        self._paused_total = paused
        self._paused_at: float | None = None

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    @property
    def paused_total(self) -> float:
        extra = self._clock.now() - self._paused_at if self._paused_at is not None else 0.0
        return self._paused_total + extra

    @property
    def elapsed(self) -> float:
        return self._clock.now() - self._start - self.paused_total

    @property
    def remaining(self) -> float | None:
        if self.duration is None:
            return None
        return max(0.0, self.duration - self.elapsed)

    @property
    def expired(self) -> bool:
        remaining = self.remaining
        return remaining is not None and remaining <= 0.0

    def restore(self, *, elapsed: float, paused_total: float, paused: bool) -> None:
        """Set the clock to stored readings (a resumed debate): time while it was down is not counted."""
        now = self._clock.now()
        self._paused_total = paused_total
        self._paused_at = now if paused else None
        self._start = now - elapsed - paused_total

    def pause(self) -> None:
        if self._paused_at is None:
            self._paused_at = self._clock.now()

    def resume(self) -> None:
        if self._paused_at is not None:
            self._paused_total += self._clock.now() - self._paused_at
            self._paused_at = None
