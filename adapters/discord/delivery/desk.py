"""The debates this bot is delivering, by thread and by the channel they were started from."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from adapters.discord.ballots.reactions import CardRegistry
from adapters.discord.delivery.sink import DiscordSink
from core.session import DebateHandle, DebateResult


@dataclass(frozen=True)
class Running:
    handle: DebateHandle
    sink: DiscordSink
    thread_id: int
    origin_id: int
    """The channel `/debate start` ran in: the thread's parent, or the thread itself."""


class DebateDesk:
    def __init__(self) -> None:
        self.cards = CardRegistry()
        self._running: dict[str, Running] = {}
        self._starting: set[int] = set()
        self._ended: set[str] = set()

    def add(self, running: Running) -> None:
        debate_id = running.handle.debate_id
        if debate_id in self._ended:  # a resumed debate may end before it is added
            self._ended.discard(debate_id)
            return
        self._running[debate_id] = running
        running.handle.on_end(lambda result: self._cut_short(running, result))

    def _cut_short(self, running: Running, result: DebateResult) -> None:
        """A debate ended here without its end (taken over by another worker, say): no longer here,
        its channel free on this worker as on the others (its end, shown here, says `finished`)."""
        if result.reason == "interrupted" and self._running.get(result.debate_id) is running:
            del self._running[result.debate_id]

    def finished(self, debate_id: str) -> None:
        if self._running.pop(debate_id, None) is None:
            self._ended.add(debate_id)

    def in_channel(self, channel_id: int) -> Running | None:
        """The debate running in this thread, or started from this channel."""
        for running in self._running.values():
            if channel_id in (running.thread_id, running.origin_id):
                return running
        return None

    def is_starting(self, channel_id: int) -> bool:
        return channel_id in self._starting

    @contextmanager
    def starting(self, channel_id: int) -> Iterator[None]:
        """Hold the channel while a start is under way (two starts at once must not both pass)."""
        self._starting.add(channel_id)
        try:
            yield
        finally:
            self._starting.discard(channel_id)

    async def aclose(self) -> None:
        for running in list(self._running.values()):
            await running.sink.aclose()
        self._running.clear()
