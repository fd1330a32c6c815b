"""The debates this process is delivering (their sinks, closed with the bot) and the vote cards it
shows. Whether a channel is busy is asked of the store (core.admission), never of this desk: every
worker must give the same answer."""

from __future__ import annotations

from dataclasses import dataclass

from adapters.discord.ballots.reactions import CardRegistry
from adapters.discord.delivery.sink import DiscordSink
from core.session import DebateHandle, DebateResult


@dataclass(frozen=True)
class Running:
    handle: DebateHandle
    sink: DiscordSink


class DebateDesk:
    def __init__(self) -> None:
        self.cards = CardRegistry()
        self._running: dict[str, Running] = {}
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

    async def read_cards_again(self) -> None:
        """Every running debate's open vote cards read again from Discord (see `DiscordSink`)."""
        for running in list(self._running.values()):
            await running.sink.read_cards_again()

    async def aclose(self) -> None:
        for running in list(self._running.values()):
            await running.sink.aclose()
        self._running.clear()
