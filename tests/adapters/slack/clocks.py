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
