"""A model provider down for a while, as the debate lives it (core/llm/breaker.py decides when).

While the provider is down the debate's clock stands still, as for a platform or store outage, and
the thread is told once that the debate waits; when a call gets through it is told how long the
debate paused. Both notices are the session's own (a replay does not expect the format to say them
again). Past the outage limit the debate stops, resumable, and says so (`failure`).
"""

from __future__ import annotations

from core.clock import Clock, DebateClock
from core.events import Emit, Notice

PAUSED_CODE = "model_paused"
BACK_CODE = "model_back"


class ModelWatch:
    """One debate's side of its model providers' outages (a `core.llm.breaker.OutageWatch`)."""

    def __init__(self, clock: Clock, debate_clock: DebateClock, emit: Emit) -> None:
        self._clock = clock
        self._debate_clock = debate_clock
        self._emit = emit
        self._down: set[str] = set()
        self._paused_here = False
        self.failure: str | None = None  # unavailable past the limit: why the debate stopped

    def now(self) -> float:
        return self._clock.now()

    async def sleep(self, seconds: float) -> None:
        await self._clock.sleep(seconds)

    async def down(self, provider: str, what: str) -> None:
        if not self._down and not self._debate_clock.paused:
            self._debate_clock.pause()
            self._paused_here = True
        self._down.add(provider)
        message = f"The model is not answering ({what}). The debate waits and tries again."
        await self._emit(Notice(level="warning", code=PAUSED_CODE, message=message))

    async def back(self, provider: str, waited: float) -> None:
        self._down.discard(provider)
        if not self._down and self._paused_here:
            self._paused_here = False
            self._debate_clock.resume()
        message = f"Paused for {waited:.0f} s: the model was unavailable. The debate goes on."
        await self._emit(Notice(level="info", code=BACK_CODE, message=message))

    def gave_up(self, reason: str) -> None:
        self.failure = reason
