"""A sink that holds a debate's events until the terminal may show them.

`rostra resume` shows a debate's history, then what is new. Whether it may resume the debate at all
is only known once it holds the debate's lease; until then nothing is printed, so the side that
loses a race to resume shows its one-line refusal and nothing else.
"""

from __future__ import annotations

import asyncio

from core.events import Event
from core.ports import EventSink


class HeldSink:
    """Passes events on to `sink` once released; the ones before, in order, at release."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink
        self._held: list[Event] | None = []
        self._lock = asyncio.Lock()

    async def emit(self, event: Event) -> None:
        async with self._lock:
            if self._held is not None:
                self._held.append(event)
                return
        await self._sink.emit(event)

    async def release(self) -> None:
        """Show what was held, then pass every event straight on."""
        async with self._lock:
            held, self._held = self._held or [], None
            for event in held:
                await self._sink.emit(event)
