"""A server that granted exactly what `rostra discord-invite` asks for: every part of a debate works
there (persona webhooks, the reaction ballot, the result in the channel). The unused thread of a
start refused once its thread was open is deleted there too (`test_start_store_away.py`)."""

from __future__ import annotations

import discord
import pytest
from simcord import ChannelHandle

from adapters.discord.install.invite import invite_permissions
from core.events import VotingClosed
from tests.adapters.discord.conftest import World, card
from tests.adapters.discord.test_votes import TIE, WINDOW


def invited_channel(world: World, name: str, *, also: discord.Permissions | None = None) -> ChannelHandle:
    """A channel where the bot has the invite's permissions (and `also`) and nothing more."""
    granted = invite_permissions() | (also or discord.Permissions.none())
    refused = discord.Permissions(discord.Permissions.all().value & ~granted.value)
    channel = world.guild.create_text_channel(
        name, overwrites={world.me: discord.PermissionOverwrite.from_pair(granted, refused)}
    )
    seen = world.bot.get_channel(channel.id)
    assert isinstance(seen, discord.TextChannel)
    assert seen.permissions_for(world.me) == granted  # what the bot itself reads there
    return channel


@pytest.mark.rostra(script=TIE)
async def test_the_invites_permissions_run_a_whole_debate(world: World) -> None:
    world.channel = invited_channel(world, "invited")
    await world.start()
    thread = world.thread()
    ballot = card(thread, "🗳️")
    assert {str(r.emoji) for r in ballot.reactions} == {"✅", "❌"}  # the bot's own: the ballot
    await world.alice.react(ballot, "❌")
    await world.env.advance_time(WINDOW)

    [closed] = [e for e in await world.events() if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 1}
    assert world.persona_requests()  # personas spoke through the channel's webhook
    assert [m for m in world.channel.history() if m.content.startswith("🏁 **Debate over")]
    assert (await world.latest()).status == "completed"
