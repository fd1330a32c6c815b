"""A gateway that comes back with a new session (Discord's gateway dropped, and the session could not
be resumed): reactions people made on a vote card meanwhile never reached the bot as events. When
READY comes again, the running debates' open vote cards are read from Discord and counted as they
stand. (Before, the card's count and the window's result left those people out.) With several
processes, the shard whose gateway dropped asks the owners of its servers' debates to do the same."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from simcord.backend import serializers

from core.events import VoteCast, VoteWithdrawn, VotingClosed
from tests.adapters.discord.conftest import SCRIPT, World, card
from tests.adapters.discord.test_remote_votes import FAST_VOTES, eventually, owner_debate, window_open
from tests.adapters.discord.test_votes import TIE as REMOTE_TIE

TIE = {  # the observers split two to two (one could not vote: keep): the people decide
    **SCRIPT,
    "observer": [
        {"vote": "keep", "reason": "Strong on evidence."},
        {"vote": "replace", "reason": "Repeats herself."},
        {"error": "timeout"},
        {"vote": "replace", "reason": "Dodged the cost question."},
    ],
}


def _gateway(world: World) -> Any:
    """The bot's gateway connection (simcord's stand-in: events reach the bot only while open)."""
    return world.bot.ws


async def _new_session(world: World) -> None:
    """The gateway back with a new session, as Discord gives one that could not be resumed: READY
    (discord.py clears its cache and says `on_ready` again), then each server's GUILD_CREATE."""
    backend = world.env.backend
    _gateway(world).open = True
    backend.emit(
        "READY",
        {
            "v": 10,
            "user": dict(serializers.user_payload(backend.bot_user)),
            "guilds": [{"id": str(world.guild.id), "unavailable": True}],
            "session_id": "a-new-session",
            "resume_gateway_url": "wss://gateway.invalid",
            "application": {"id": str(backend.application_id), "flags": 0},
        },
    )
    for guild in list(backend.guilds.values()):
        backend.emit("GUILD_CREATE", serializers.guild_create_payload(backend, guild))
    await world.env.settle()


@pytest.mark.rostra(script=TIE)
async def test_reactions_made_while_the_gateway_was_away_are_counted_once_it_is_back(world: World) -> None:
    await world.start()
    thread = world.thread()
    ballot = card(thread, "🗳️")
    await world.bob.react(ballot, "✅")  # seen live: bob votes keep
    await world.env.settle()

    await _gateway(world).close()  # the gateway drops; people go on voting on the card
    await world.alice.react(ballot, "❌")
    await world.carol.react(ballot, "❌")
    await world.bob.unreact(ballot, "✅")  # bob takes his vote back
    await world.env.settle()
    body = "\n".join(e.description or "" for e in card(thread, "🗳️").embeds)
    assert "People so far: ✅ Keep 1 · ❌ Replace 0" in body  # the bot saw none of it

    await _new_session(world)
    body = "\n".join(e.description or "" for e in card(thread, "🗳️").embeds)
    assert "People so far: ✅ Keep 0 · ❌ Replace 2" in body, body
    await world.env.advance_time(30)

    events = await world.events()
    people = {e.voter.id: e.choice for e in events if isinstance(e, VoteCast) and e.voter.human}
    assert people == {
        str(world.bob.id): "keep",
        str(world.alice.id): "replace",
        str(world.carol.id): "replace",
    }
    assert [e.voter.id for e in events if isinstance(e, VoteWithdrawn)] == [str(world.bob.id)]
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert (closed.human_tally, closed.decision, closed.tie_broken_by) == (
        {"keep": 0, "replace": 2},
        "replace",
        "humans",
    )


@pytest.mark.slow
@pytest.mark.rostra(script=REMOTE_TIE, storage=FAST_VOTES)
async def test_reactions_the_shard_missed_are_read_by_the_process_that_runs_the_debate(world: World) -> None:
    """After a failover the debate runs in another process than the shard that receives the server's
    events and passes its reactions on. That shard's gateway drops and comes back with a new session:
    the owner is asked, through the store, to read its open cards (it does not see the gateway)."""
    async with owner_debate(world) as (owner, handle):
        started = await window_open(owner, handle.debate_id)
        emoji = {o.key: o.emoji for o in started.options}
        assert world.rt.manager.get(handle.debate_id) is None  # the gateway's process does not run it
        ballot = card(world.thread(), "🗳️")
        await world.bob.react(ballot, emoji["keep"])  # passed on live: bob votes keep

        async def bob_counted() -> bool:
            return len(handle.state.ballots[started.vote_id].human_votes) == 1

        await eventually(bob_counted)
        await _gateway(world).close()  # the shard's gateway drops; people go on voting on the card
        await world.alice.react(ballot, emoji["replace"])
        await world.carol.react(ballot, emoji["replace"])
        await world.bob.unreact(ballot, emoji["keep"])  # bob takes his vote back
        await world.env.settle()
        assert len(handle.state.ballots[started.vote_id].human_votes) == 1  # none of it reached anyone

        await _new_session(world)
        await asyncio.wait_for(handle.wait(), 30)
    events = await world.rt.store.events(handle.debate_id)  # the one database
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 2}
    assert closed.decision == "replace"
    assert [e.voter.id for e in events if isinstance(e, VoteWithdrawn)] == [str(world.bob.id)]
