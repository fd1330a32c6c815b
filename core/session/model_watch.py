"""A model provider down for a while, as the debate lives it (core/llm/breaker.py decides when).

While the provider is down the debate's clock stands still, as for a platform or store outage, and
the thread is told once that the debate waits; when a call gets through it is told how long the
debate paused. Both notices are the session's own (a replay does not expect the format to say them
again). Past the outage limit the debate stops, resumable, and says so (`failure`).

A debate taken over (or resumed) in the middle of an outage finds in its log that the thread was told
it waits (`told`): it does not say so again, and says when the model answers (without a duration:
the process that saw the outage begin is gone). Before each live call the store is asked whether the
debate is still this process's (`still_ours`): a process woken from a pause, its debate taken over
meanwhile, does not go on probing the model or pay for a call the new owner makes too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from core.clock import Clock, DebateClock
from core.errors import LeaseLost
from core.events import Emit, Event, Notice

PAUSED_CODE = "model_paused"
BACK_CODE = "model_back"
STOPPED_CODE = "model_unavailable"  # core/session/notices.py model_stopped


def told_waiting(log: Sequence[Event]) -> bool:
    """The log leaves the thread told that the debate waits for the model (and nothing since)."""
    said = [e.code for e in log if isinstance(e, Notice) and e.code in (PAUSED_CODE, BACK_CODE, STOPPED_CODE)]
    return bool(said) and said[-1] == PAUSED_CODE


class ModelWatch:
    """One debate's side of its model providers' outages (a `core.llm.breaker.OutageWatch`)."""

    def __init__(
        self,
        clock: Clock,
        debate_clock: DebateClock,
        emit: Emit,
        *,
        still_ours: Callable[[], Awaitable[bool]] | None = None,
        told: bool = False,
    ) -> None:
        """`still_ours`: whether the debate is still this process's (asked before each live call);
        `told`: the thread was told the debate waits, before a takeover (`told_waiting`)."""
        self._still_ours = still_ours
        self._told = told
        self._clock = clock
        self._debate_clock = debate_clock
        self._emit = emit
        self._down: set[str] = set()
        self._paused_here = False
        self.failure: str | None = None  # unavailable past the limit: why the debate stopped

    def now(self) -> float:
        return self._clock.now()

    async def calling(self) -> None:
        if self._still_ours is not None and not await self._still_ours():
            raise LeaseLost("another process runs this debate now: no more calls from here")

    async def sleep(self, seconds: float) -> None:
        await self._clock.sleep(seconds)

    async def down(self, provider: str, what: str) -> None:
        if not self._down and not self._debate_clock.paused:
            self._debate_clock.pause()
            self._paused_here = True
        self._down.add(provider)
        if self._told:
            return  # the thread was told before the takeover; it still waits
        message = f"The model is not answering ({what}). The debate waits and tries again."
        await self._emit(Notice(level="warning", code=PAUSED_CODE, message=message))

    async def back(self, provider: str, waited: float) -> None:
        self._down.discard(provider)
        if not self._down and self._paused_here:
            self._paused_here = False
            self._debate_clock.resume()
        await self._went_on(waited)

    async def answering(self, provider: str) -> None:
        """A call got through without an outage here: one the thread was told of before a takeover is
        over."""
        if self._told and not self._down:
            await self._went_on(0.0)

    async def _went_on(self, waited: float) -> None:
        message = f"Paused for {waited:.0f} s: the model was unavailable. The debate goes on."
        if self._told:  # how long of that the model was down, nobody here knows
            message, self._told = "The model answers again. The debate goes on.", False
        await self._emit(Notice(level="info", code=BACK_CODE, message=message))

    def gave_up(self, reason: str) -> None:
        self.failure = reason
