"""Discord tests: the real bot (discord.py) against simcord's in-memory Discord, with a real
runtime (SQLite in a temp dir, the scripted model, no network).

Time: the runtime keeps its default `RealClock` (loop time and `asyncio.sleep`). Inside the bot's
tasks simcord virtualises both: the debate's clock stands still unless the test moves it, and a
long sleep such as a 30 s human voting window is parked until `env.advance_time(...)`. So the
scripted model runs with no latency, a debate runs to its end (or to its first window) within
one actor call, and every window closes exactly when the test says.

Per-test settings go through the `rostra` marker: `@pytest.mark.rostra(script={...},
discord={...}, limits={...}, formats={...})`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
import pytest
from simcord import ChannelHandle, Env, GuildHandle, HttpLogEntry, InteractionResult, MemberActor

from adapters.discord import create_bot
from adapters.discord.app import RostraBot
from bot.runtime import Runtime
from core.clock import RealClock
from core.events import Event
from core.ports import DebateRecord
from tests.helpers import make_config, write_script

TOPIC = "Should cities ban cars?"
SCRIPT: dict[str, Any] = {
    "proposition": ["Cities should ban cars. Streets belong to people, not parking."],
    "opposition": ["A ban punishes those with no other way to get to work."],
    "observer": [{"vote": "keep", "reason": "Clear and on topic."}],
    "moderator": ["Both sides made their case; the question is how fast, and for whom."],
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rostra(script=..., **sections): the runtime's script and config overrides"
    )


@pytest.fixture
async def runtime(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Runtime]:
    marker = request.node.get_closest_marker("rostra")
    given: dict[str, Any] = dict(marker.kwargs) if marker else {}
    script = write_script(tmp_path, given.pop("script", SCRIPT))
    sections: dict[str, Any] = {
        "model": {"script": str(script), "latency": 0},
        # two arena rounds: one vote between them (none follows the last round); oxford keeps one
        "limits": {"max_rounds": 2},
        "formats": {"oxford": {"max_rounds": 1}},
        "discord": {"edit_interval": 0},
    }
    for name, values in given.items():
        sections[name] = {**sections.get(name, {}), **values} if isinstance(values, dict) else values
    if "url" in request.fixturenames:  # a test that asks for `url` runs on both backends
        sections["storage"] = {**sections.get("storage", {}), "url": request.getfixturevalue("url")}
    config = make_config(tmp_path, **sections)
    async with Runtime(config, clock=RealClock()) as rt:
        yield rt


@pytest.fixture
def simcord_bot(runtime: Runtime) -> RostraBot:
    return create_bot(runtime)


@dataclass
class World:
    env: Env
    rt: Runtime
    guild: GuildHandle
    channel: ChannelHandle
    alice: MemberActor
    bob: MemberActor
    carol: MemberActor

    @property
    def me(self) -> discord.Member:
        """The bot's member in the guild."""
        me = self.guild.me
        assert me is not None
        return me

    @property
    def bot(self) -> RostraBot:
        bot = self.env.bot
        assert isinstance(bot, RostraBot)
        return bot

    async def start(
        self,
        member: MemberActor | None = None,
        channel: ChannelHandle | None = None,
        *,
        topic: str = TOPIC,
        **options: Any,
    ) -> InteractionResult:
        """`/debate start`; an arena debate gets one exchange per round unless told otherwise."""
        if "format" not in options:
            options.setdefault("exchanges", 1)
        return await (member or self.alice).slash(
            channel or self.channel, "debate start", topic=topic, **options
        )

    def thread(self, channel: ChannelHandle | None = None) -> ChannelHandle:
        [thread] = (channel or self.channel).threads
        return thread

    async def latest(self) -> DebateRecord:
        [record, *_] = await self.rt.store.list_debates(1)
        return record

    async def events(self, debate_id: str | None = None) -> list[Event]:
        return await self.rt.store.events(debate_id or (await self.latest()).id)

    def persona_requests(self, method: str = "POST") -> list[HttpLogEntry]:
        """Webhook executions (persona messages), not interaction replies."""
        app = self.env.bot.application_id
        return [
            r
            for r in self.env.http_requests
            if r.method == method
            and re.fullmatch(r"/webhooks/\d+/[^/]+(/messages/\d+)?", r.path)
            and not r.path.startswith(f"/webhooks/{app}/")
        ]


def cards(channel: ChannelHandle) -> list[discord.Embed]:
    """Every embed in a channel or thread, oldest first."""
    return [embed for message in channel.history() for embed in message.embeds]


def json_of(request: HttpLogEntry) -> Any:
    """The JSON body the bot sent with a request (every request looked at here carries one)."""
    assert request.json is not None
    return request.json


def buttons_of(message: discord.Message) -> list[discord.Button]:
    """The message's buttons, row after row (Rostra's messages carry only rows of buttons)."""
    found: list[discord.Button] = []
    for row in message.components:
        assert isinstance(row, discord.ActionRow)
        for item in row.children:
            assert isinstance(item, discord.Button)
            found.append(item)
    return found


def card(channel: ChannelHandle, title_start: str) -> discord.Message:
    [found] = [m for m in channel.history() if m.embeds and (m.embeds[0].title or "").startswith(title_start)]
    return found


@pytest.fixture
async def world(simcord_env: Env, runtime: Runtime) -> World:
    guild = simcord_env.create_guild("Agora")
    channel = guild.create_text_channel("debates")
    members = [guild.add_member(simcord_env.create_user(name)) for name in ("alice", "bob", "carol")]
    return World(simcord_env, runtime, guild, channel, *members)


def shown(world: World, thread: ChannelHandle | None = None) -> list[discord.Message]:
    """What the debate thread shows, oldest first: the bot's messages in it and the personas'.

    simcord gap: persona (webhook) messages sent with `thread=` land in the parent channel; every
    persona request is checked to have targeted the thread, then they are read from the parent.
    """
    thread = thread or world.thread()
    requests = world.persona_requests() + world.persona_requests("PATCH")
    assert all(r.params.get("thread_id") == thread.id for r in requests)
    parent = [m for m in world.channel.history() if m.webhook_id is not None]
    return sorted([*thread.history(), *parent], key=lambda m: m.id)


def label(message: discord.Message) -> str:
    """A message in a word: a persona's name, a card's title, or the first words of a line."""
    if message.webhook_id is not None:
        return f"{message.author.name}:"
    if message.embeds and message.embeds[0].title:
        return message.embeds[0].title
    return message.content.split(" ", 1)[0] if message.content else "?"
