"""Limits under concurrency: `/debate start` handled simultaneously against a cap of 1 and a cooldown
starts exactly one debate.

simcord runs one interaction at a time, so the command handler (the real `Launcher`, on the bot's
real channel, guild and member objects from simcord) is called directly and concurrently, each call
with a minimal interaction that records its replies; the threads are opened in simcord.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import discord
import pytest
from simcord import ChannelHandle, MemberActor

from adapters.discord.launch import StartRequest
from core.errors import TOO_MANY_DEBATES
from tests.adapters.discord.conftest import World


@dataclass
class _Said:
    content: str
    ephemeral: bool


@dataclass
class _Response:
    said: list[_Said]
    answered: list[bool]  # the interaction's: whether it was answered or deferred

    def is_done(self) -> bool:
        return bool(self.answered)

    async def send_message(self, content: str, *, ephemeral: bool = False, **_: Any) -> None:
        self.answered.append(True)
        self.said.append(_Said(content, ephemeral))

    async def defer(self, **_: Any) -> None:
        self.answered.append(True)
        await asyncio.sleep(0)


@dataclass
class _Followup:
    said: list[_Said]

    async def send(self, content: str, *, ephemeral: bool = False, **_: Any) -> None:
        self.said.append(_Said(content, ephemeral))


@dataclass
class _Interaction:
    """What `Launcher.start` reads from a `/debate start` interaction."""

    client: discord.Client
    guild: discord.Guild
    channel: discord.TextChannel
    user: discord.Member
    permissions: discord.Permissions = field(default_factory=discord.Permissions.none)
    app_permissions: discord.Permissions = field(default_factory=discord.Permissions.all)
    said: list[_Said] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)

    @property
    def response(self) -> _Response:
        return _Response(self.said, self.answered)

    @property
    def followup(self) -> _Followup:
        return _Followup(self.said)

    async def edit_original_response(self, *, content: str, **_: Any) -> None:
        self.said.append(_Said(content, True))


async def _interaction(world: World, member: MemberActor, channel: ChannelHandle) -> _Interaction:
    guild = world.bot.get_guild(world.guild.id)
    assert guild is not None
    text_channel = guild.get_channel(channel.id)
    user = guild.get_member(member.id) or await guild.fetch_member(member.id)
    assert isinstance(text_channel, discord.TextChannel)
    return _Interaction(world.bot, guild, text_channel, user)


async def _start_together(world: World, starts: list[tuple[MemberActor, ChannelHandle]]) -> list[_Said]:
    interactions = [await _interaction(world, m, c) for m, c in starts]
    await asyncio.gather(
        *(
            world.bot.debate_commands.launcher.start(
                i,  # type: ignore[arg-type]
                StartRequest(topic=f"Should town {n} ban cars?", humans="vote", exchanges=1),
            )
            for n, i in enumerate(interactions)
        )
    )
    return [i.said[-1] for i in interactions]


@pytest.mark.rostra(limits={"max_debates_per_scope": 1, "user_cooldown": 0})
async def test_simultaneous_starts_against_a_cap_of_one_start_one_debate(world: World) -> None:
    channels = [world.channel, *(world.guild.create_text_channel(f"room-{i}") for i in range(2))]

    said = await _start_together(
        world, list(zip([world.alice, world.bob, world.carol], channels, strict=True))
    )

    refused = [s for s in said if s.ephemeral]
    assert len(refused) == 2
    assert all("(the limit is 1)" in s.content for s in refused)
    assert sum(len(c.threads) for c in channels) == 1
    assert len(await world.rt.store.list_debates(50)) == 1
    assert world.rt.admission.pending() == 0


@pytest.mark.rostra(limits={"user_cooldown": 60})
async def test_simultaneous_starts_by_one_person_start_one_debate_within_the_cooldown(world: World) -> None:
    channels = [world.channel, *(world.guild.create_text_channel(f"room-{i}") for i in range(3))]

    said = await _start_together(world, [(world.alice, c) for c in channels])

    refused = [s for s in said if s.ephemeral]
    assert len(refused) == 3
    assert all(s.content.startswith("You started a debate moments ago") for s in refused)
    assert sum(len(c.threads) for c in channels) == 1
    assert len(await world.rt.store.list_debates(50)) == 1


@pytest.mark.rostra(limits={"max_concurrent_debates": 1, "max_debates_per_scope": 5, "user_cooldown": 0})
async def test_starts_beyond_the_bots_cap_are_refused_in_the_cores_words(world: World) -> None:
    channels = [world.channel, world.guild.create_text_channel("room-1")]

    said = await _start_together(world, list(zip([world.alice, world.bob], channels, strict=True)))

    [refused] = [s for s in said if s.ephemeral]
    assert refused.content == TOO_MANY_DEBATES  # one wording, the core's, on every front end
    assert sum(len(c.threads) for c in channels) == 1
    assert world.rt.admission.pending() == 0
