"""Button ballots (`discord.ballot: buttons`), real discord.py through simcord: one vote per member,
a changed vote, private confirmations, no seeded reactions, buttons disabled at close, and votes made
before and after a restart both counted."""

from __future__ import annotations

from typing import Any

import discord
import pytest

from adapters.discord import create_bot
from core.events import VotingClosed
from tests.adapters.discord.conftest import World, buttons_of, card
from tests.adapters.discord.test_resume import TIE

BUTTONS: dict[str, Any] = {"ballot": "buttons"}


def labels(message: discord.Message) -> list[tuple[str, bool]]:
    return [(c.label or "", c.disabled) for c in buttons_of(message)]


async def said(world: World, member: Any, label: str, channel: Any = None) -> str:
    ballot = card(world.thread(channel), "🗳️")
    result = await member.click(ballot, label=label)
    assert result.ephemeral and result.response is not None
    return str(result.response.content)


def closed_of(events: list[Any]) -> VotingClosed:
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    return closed


@pytest.mark.rostra(script=TIE, discord=BUTTONS)
async def test_one_vote_per_member_changeable_and_disabled_at_close(world: World) -> None:
    await world.start()
    ballot = card(world.thread(), "🗳️")
    text = ballot.embeds[0].description or ""
    assert "**It's a tie: people decide!** Click ✅ Keep or ❌ Replace within" in text
    assert "One vote each: your last click counts." in text
    assert "People so far: ✅ Keep 0 · ❌ Replace 0 · voting closes <t:" in text
    assert "react" not in text.lower().replace("reactions", "")
    assert labels(ballot) == [("Keep", False), ("Replace", False)]
    assert not ballot.reactions  # nothing seeded: no Add Reactions needed, no bot counts to subtract

    assert await said(world, world.alice, "Replace") == "You voted ❌ Replace."
    assert await said(world, world.alice, "Replace") == "You already voted ❌ Replace."
    assert await said(world, world.alice, "Keep") == "You changed your vote to ✅ Keep."
    assert await said(world, world.bob, "Keep") == "You voted ✅ Keep."
    assert await said(world, world.carol, "Replace") == "You voted ❌ Replace."
    await world.env.settle()
    shown = card(world.thread(), "🗳️").embeds[0].description or ""
    assert "People so far: ✅ Keep 2 · ❌ Replace 1" in shown  # live counts on the card

    await world.env.advance_time(30)
    await world.env.settle()
    closed = closed_of(await world.events())
    assert closed.human_tally == {"keep": 2, "replace": 1}
    assert (closed.decision, closed.tie_broken_by) == ("keep", "humans")
    assert labels(card(world.thread(), "🗳️")) == [("Keep", True), ("Replace", True)]
    with pytest.raises(Exception, match=r"disabled|not interactive|No matching"):
        await world.bob.click(card(world.thread(), "🗳️"), label="Replace")


@pytest.mark.rostra(script=TIE, discord=BUTTONS)
async def test_button_votes_survive_a_restart(world: World) -> None:
    await world.start()
    assert await said(world, world.alice, "Replace") == "You voted ❌ Replace."

    await world.env.restart_bot(create_bot(world.rt))
    resuming = world.bot.resuming
    assert resuming is not None
    await resuming
    await world.env.settle()

    assert await said(world, world.alice, "Replace") == "You already voted ❌ Replace."
    assert await said(world, world.bob, "Replace") == "You voted ❌ Replace."
    await world.env.advance_time(30)
    await world.env.settle()
    assert closed_of(await world.events()).human_tally == {"keep": 0, "replace": 2}


@pytest.mark.rostra(script=TIE, discord=BUTTONS)
async def test_button_ballots_need_no_add_reactions(world: World) -> None:
    channel = world.guild.create_text_channel(
        "no-reactions",
        overwrites={world.me: discord.PermissionOverwrite(add_reactions=False, read_message_history=False)},
    )
    result = await world.start(channel=channel, humans="tiebreak")
    assert not result.ephemeral, result.response
    assert await said(world, world.alice, "Replace", channel) == "You voted ❌ Replace."
