"""The debates this Slack app is delivering: each channel's current sink, every sink still
delivering, and each workspace's persona identity (shared by its debates)."""

from __future__ import annotations

from adapters.slack.delivery.sender import PersonaIdentity
from adapters.slack.delivery.sink import SlackSink


class SlackDesk:
    def __init__(self) -> None:
        self._sinks: dict[str, SlackSink] = {}  # channel → the sink of its current debate
        self._live: set[SlackSink] = set()
        self._identities: dict[str, PersonaIdentity] = {}

    def identity(self, team: str) -> PersonaIdentity:
        return self._identities.setdefault(team, PersonaIdentity())

    def sink_in(self, channel: str) -> SlackSink | None:
        return self._sinks.get(channel)

    def track(self, sink: SlackSink) -> None:
        self._sinks[sink.channel] = sink
        self._live.add(sink)

    def forget(self, sink: SlackSink) -> None:
        self._live.discard(sink)
        if self._sinks.get(sink.channel) is sink:
            del self._sinks[sink.channel]

    def delivering(self) -> list[SlackSink]:
        return [sink for sink in self._live if not sink.finished]

    async def aclose(self) -> None:
        sinks = list(self._live)
        self._live.clear()
        self._sinks.clear()
        for sink in sinks:
            await sink.aclose()
