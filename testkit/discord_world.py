"""The real discord.py client (its HTTP client, rate limiter and webhook adapter) against the strict
loopback REST fake (testkit/discord_rest.py): a guild, a text channel and its debate threads, and
real debates delivered there by the real DiscordSink (`arena`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord

from adapters.discord.ballots.reactions import CardRegistry
from adapters.discord.delivery.sink import DiscordSink
from adapters.discord.delivery.webhooks import PersonaWebhooks, seats_taken
from adapters.metering import platform_trace
from bot.runtime import Runtime
from core.clock import RealClock
from core.ports import Binding
from core.session import DebateHandle
from core.spec import DebateSpec
from testkit.config import make_config, write_script
from testkit.discord_rest import BOT_ID, FakeDiscordREST, Limits


@dataclass
class Loopback:
    api: FakeDiscordREST
    client: discord.Client
    guild: discord.Guild
    channel: discord.TextChannel

    @property
    def owner_id(self) -> int:
        return BOT_ID

    def thread(self) -> discord.Thread:
        """A new public thread under the channel (known to the fake and to discord.py's cache)."""
        thread_id = self.api.add_channel(parent_id=self.channel.id)
        data: Any = {
            "id": str(thread_id),
            "name": "debate",
            "type": 11,
            "parent_id": str(self.channel.id),
            "owner_id": str(BOT_ID),
            "message_count": 0,
            "member_count": 1,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": discord.utils.utcnow().isoformat(),
                "locked": False,
            },
        }
        thread = discord.Thread(guild=self.guild, state=self.client._connection, data=data)
        self.guild._add_thread(thread)
        return thread

    def channel_named(self, name: str) -> discord.TextChannel:
        channel_id = self.api.add_channel()
        data: Any = {"id": str(channel_id), "name": name, "type": 0, "position": 0}
        channel = discord.TextChannel(state=self.client._connection, guild=self.guild, data=data)
        self.guild._add_channel(channel)
        return channel


@asynccontextmanager
async def loopback(
    limits: Limits | None = None, *, webhooks: PersonaWebhooks | None = None
) -> AsyncIterator[Loopback]:
    """The fake and a logged-in discord.py client; with `webhooks`, its requests take their global
    window as they are sent, as the bot's do."""
    api = FakeDiscordREST(limits)
    await api.start()
    paced_by = webhooks.pacing(lambda: None) if webhooks is not None else None
    trace = platform_trace("discord", paced_by=paced_by)
    client = discord.Client(intents=discord.Intents.none(), http_trace=trace)
    try:
        with api.pointed_at():
            await client.login("loopback-token")  # GET /users/@me through the real HTTP client
            guild_data: Any = {"id": "1", "name": "Agora"}
            guild = discord.Guild(data=guild_data, state=client._connection)
            channel_id = api.add_channel()
            channel_data: Any = {"id": str(channel_id), "name": "debates", "type": 0, "position": 0}
            channel = discord.TextChannel(state=client._connection, guild=guild, data=channel_data)
            guild._add_channel(channel)
            yield Loopback(api, client, guild, channel)
    finally:
        await client.close()
        await api.stop()


FAST = Limits(
    webhook=(5, 0.2), channel=(5, 0.5), reaction=(1, 0.025), global_=(50, 0.1), webhook_posts=(30, 6.0)
)
"""Discord's limits with time compressed tenfold (the default in tests; the benchmark uses the real ones)."""

SCRIPT: dict[str, Any] = {
    "proposition": ["Cities should ban cars. Streets belong to people, not parking."],
    "opposition": ["A ban punishes those with no other way to get to work."],
    "observer": [{"vote": "keep", "reason": "Clear and on topic."}],
    "moderator": ["Both sides made their case; the question is how fast, and for whom."],
}


@dataclass
class Running:
    handle: DebateHandle
    sink: DiscordSink
    thread: discord.Thread


@dataclass
class Arena:
    """Real debates (Runtime, scripted model, SQLite) delivered by the real DiscordSink and sender
    through discord.py's HTTP client to the loopback fake."""

    lb: Loopback
    rt: Runtime
    webhooks: PersonaWebhooks = field(default_factory=lambda: PersonaWebhooks("Rostra"))
    cards: CardRegistry = field(default_factory=CardRegistry)

    async def start(self, topic: str = "Should cities ban cars?", **options: Any) -> Running:
        thread = self.lb.thread()
        sink = DiscordSink(
            thread=thread,
            webhooks=self.webhooks,
            taken=await seats_taken(self.rt.store, thread),
            owner_id=self.lb.owner_id,
            settings=self.rt.config.discord,
            store=self.rt.store,
            cards=self.cards,
            on_finished=lambda debate_id: None,
            pictures=self.rt.config.results.picture,
        )
        spec = DebateSpec("arena", topic, {"humans": "off", "exchanges_per_round": 1, **options})
        binding = Binding(platform="discord", scope="1", channel=str(thread.id), started_by="1")
        handle = await self.rt.start_debate(spec, sink, binding=binding, values=sink.placement)
        sink.attach(handle)
        return Running(handle, sink, thread)

    async def run(self, topic: str = "Should cities ban cars?", **options: Any) -> Running:
        running = await self.start(topic, **options)
        await running.handle.wait()
        await running.sink.finish()
        return running


@asynccontextmanager
async def arena(
    tmp_path: Path,
    *,
    rest: Limits | None = None,
    script: dict[str, Any] | None = None,
    **sections: Any,
) -> AsyncIterator[Arena]:
    config_sections: dict[str, Any] = {
        "model": {"script": str(write_script(tmp_path, script or SCRIPT)), "latency": 0},
        # two arena rounds: one vote between them (none follows the last round); oxford keeps one
        "limits": {"max_rounds": 2},
        "formats": {"oxford": {"max_rounds": 1}},
        "discord": {"edit_interval": 1.0},
    }
    for name, values in sections.items():
        config_sections[name] = {**config_sections.get(name, {}), **values}
    config = make_config(tmp_path, **config_sections)
    webhooks = PersonaWebhooks("Rostra")
    async with loopback(rest or FAST, webhooks=webhooks) as lb, Runtime(config, clock=RealClock()) as rt:
        yield Arena(lb, rt, webhooks)
