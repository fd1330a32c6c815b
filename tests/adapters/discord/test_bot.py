"""The bot itself: no privileged intents, commands synced globally or to a dev server."""

from __future__ import annotations

import discord
import pytest
from simcord import Env

from tests.adapters.discord.conftest import World, cards

DEV_GUILD = 1456074443980800999
COMMANDS = ("debate start", "debate stop", "debate status", "debate transcript", "debate personas")


async def test_the_bot_asks_for_no_privileged_intent(world: World) -> None:
    intents = world.bot.intents
    assert (intents.members, intents.presences, intents.message_content) == (False, False, False)
    assert intents.guilds and intents.guild_reactions


async def test_commands_are_synced_globally_by_default(world: World) -> None:
    assert world.alice.available_commands(world.channel) == COMMANDS


@pytest.mark.rostra(discord={"dev_guild_id": DEV_GUILD})
async def test_with_a_dev_guild_commands_are_synced_there_only(simcord_env: Env) -> None:
    dev = simcord_env.create_guild("Dev", id=DEV_GUILD)
    other = simcord_env.create_guild("Other")
    tester = dev.add_member(simcord_env.create_user("tester"))
    stranger = other.add_member(simcord_env.create_user("stranger"))

    assert tester.available_commands(dev.create_text_channel("lab")) == COMMANDS
    assert stranger.available_commands(other.create_text_channel("lobby")) == ()


async def test_deleting_the_thread_stops_the_debate(world: World) -> None:
    await world.start(humans="vote")
    thread = world.bot.get_channel(world.thread().id)
    assert isinstance(thread, discord.Thread)
    assert cards(world.thread())[0].title is not None

    await thread.delete()
    await world.env.advance_time(30)  # the debate goes on, and finds its thread gone

    record = await world.latest()
    assert (record.status, record.reason) == ("stopped", "the debate thread was deleted")
