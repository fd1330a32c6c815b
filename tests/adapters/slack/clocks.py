"""A test clock: virtual time, where long sleeps (a human vote window, a slow model) wait for the test."""

from __future__ import annotations

import asyncio


class HeldClock:
    """Like core's FakeClock, except that sleeps of `hold` seconds or more wait for `release()`.

    With `hold` above every model latency, a human vote window (30 s by default) stays open until
    the test has reacted; a scripted reply with a `delay` of `hold` or more blocks the model.
    """

    def __init__(self, hold: float = 5.0, start: float = 1000.0) -> None:
        self.hold = hold
        self._now = start
        self._gate = asyncio.Event()
        self._held = asyncio.Condition()
        self.waiting = 0

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        deadline = self._now + max(0.0, seconds)
        if seconds >= self.hold:
            async with self._held:
                gate = self._gate
                self.waiting += 1
                self._held.notify_all()
            try:
                await gate.wait()
            finally:
                if gate is self._gate:  # cancelled while held (a release resets the count)
                    self.waiting -= 1
        else:
            for _ in range(3):
                await asyncio.sleep(0)
        self._now = max(self._now, deadline)
        await asyncio.sleep(0)

    async def release(self, held: int = 1, within: float = 5.0) -> None:
        """Once `held` sleepers are waiting, let them all go (later long sleeps wait again)."""
        async with asyncio.timeout(within), self._held:
            await self._held.wait_for(lambda: self.waiting >= held)
            self._gate.set()
            self._gate = asyncio.Event()
            self.waiting = 0


class SteppedClock:
    """Virtual time that moves only when the test says (`advance`): a sleeper wakes once the time
    has reached its deadline. For what ticks on its own (a vote card's countdown)."""

    def __init__(self, start: float = 5000.0) -> None:
        self._now = start
        self._changed = asyncio.Condition()
        self.sleepers = 0

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        deadline = self._now + max(0.0, seconds)
        async with self._changed:
            self.sleepers += 1
            self._changed.notify_all()
            try:
                await self._changed.wait_for(lambda: self._now >= deadline)
            finally:
                self.sleepers -= 1
                self._changed.notify_all()

    async def advance(self, seconds: float) -> None:
        async with self._changed:
            self._now += seconds
            self._changed.notify_all()

    async def wait_for_sleepers(self, count: int = 1, within: float = 5.0) -> None:
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: self.sleepers >= count)
