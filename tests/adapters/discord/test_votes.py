"""People vote with reactions on the vote card: the bot's own reactions are the ballot, never votes."""

from __future__ import annotations

from typing import Any

import pytest

from core.events import HumanVoteOpened, SpeakerSwitched, VoteCast, VoteWithdrawn, VotingClosed
from tests.adapters.discord.conftest import SCRIPT, World, card

WINDOW = 30


def _observers(*votes: str, delay: float = 0) -> list[dict[str, Any]]:
    return [{"vote": v, "reason": f"I say {v}.", "delay": delay} for v in votes]


TIE = {**SCRIPT, "observer": _observers("keep", "replace", "keep", "replace")}
SLOW_TIE = {**SCRIPT, "observer": _observers("keep", "replace", "keep", "replace", delay=60)}


def _closed(events: list[Any]) -> VotingClosed:
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    return closed


@pytest.mark.rostra(script=TIE)
async def test_on_an_ai_tie_the_people_decide_each_counted_once(world: World) -> None:
    await world.start()
    thread = world.thread()
    ballot = card(thread, "🗳️")
    text = ballot.embeds[0].description or ""
    assert "**It's a tie: people decide!** React with ✅ Keep or ❌ Replace within" in text
    assert "People so far: ✅ Keep 0 · ❌ Replace 0 · voting closes <t:" in text
    counts = {str(r.emoji): r.count for r in ballot.reactions}
    assert counts == {"✅": 1, "❌": 1}  # the bot's own: the ballot

    await world.alice.react(ballot, "❌")
    await world.bob.react(ballot, "✅")
    await world.bob.react(ballot, "❌")  # bob changes his mind: his ✅ stays on screen, his vote moves
    await world.carol.react(ballot, "✅")
    await world.carol.unreact(ballot, "✅")  # carol withdraws

    live = card(thread, "🗳️").embeds[0].description or ""
    assert "People so far: ✅ Keep 0 · ❌ Replace 2" in live
    await world.env.advance_time(WINDOW)

    events = await world.events()
    closed = _closed(events)
    assert closed.tie_broken_by == "humans"
    assert closed.decision == "replace"
    assert closed.human_tally == {"keep": 0, "replace": 2}
    bot_user = world.bot.user
    assert bot_user is not None
    assert str(bot_user.id) not in {e.voter.id for e in events if isinstance(e, VoteCast)}
    assert [e.voter.name for e in events if isinstance(e, VoteWithdrawn)] == ["carol"]
    [switch] = [e for e in events if isinstance(e, SpeakerSwitched)]
    final = card(thread, "🗳️").embeds[0].description or ""
    assert f"**Result: {switch.old.name} is replaced**" in final
    assert "AI: ✅ Keep 2 · ❌ Replace 2" in final and "People: ✅ Keep 0 · ❌ Replace 2" in final
    assert "voting closes" not in final
    assert any(m.content.startswith("🔁") and switch.new.name in m.content for m in thread.history())


@pytest.mark.rostra(script=TIE)
async def test_the_bots_own_reactions_never_count(world: World) -> None:
    await world.start()
    ballot = card(world.thread(), "🗳️")
    assert {str(r.emoji): r.count for r in ballot.reactions} == {"✅": 1, "❌": 1}

    await world.env.advance_time(WINDOW)

    closed = _closed(await world.events())
    assert closed.human_tally == {"keep": 0, "replace": 0}
    assert closed.tie_broken_by == "default" and closed.decision == "keep"


@pytest.mark.rostra(script=SLOW_TIE)
async def test_reactions_made_before_the_window_opens_count_when_it_does(world: World) -> None:
    await world.start()
    ballot = card(world.thread(), "🗳️")
    await world.alice.react(ballot, "✅")
    await world.bob.react(ballot, "✅")
    await world.carol.react(ballot, "❌")
    assert not [e for e in await world.events() if isinstance(e, HumanVoteOpened)]

    await world.env.advance_time(60)  # the observers answer: a tie, the window opens
    opened = [e for e in await world.events() if isinstance(e, HumanVoteOpened)]
    assert [o.reason for o in opened] == ["tie"]
    assert "People so far: ✅ Keep 2 · ❌ Replace 1" in (
        card(world.thread(), "🗳️").embeds[0].description or ""
    )
    await world.env.advance_time(WINDOW)

    closed = _closed(await world.events())
    assert closed.human_tally == {"keep": 2, "replace": 1}
    assert (closed.decision, closed.tie_broken_by) == ("keep", "humans")


@pytest.mark.rostra(script={**SCRIPT, "observer": _observers("replace", "replace", "keep", "keep")})
async def test_in_vote_mode_the_peoples_majority_is_one_more_vote(world: World) -> None:
    await world.start(humans="vote")
    ballot = card(world.thread(), "🗳️")
    assert "**People vote too:** react with ✅ Keep or ❌ Replace within" in (
        ballot.embeds[0].description or ""
    )

    await world.alice.react(ballot, "❌")
    await world.env.advance_time(WINDOW)

    closed = _closed(await world.events())
    assert closed.tally == {"keep": 2, "replace": 3}
    assert closed.decision == "replace"
    assert "People: ✅ Keep 0 · ❌ Replace 1" in (card(world.thread(), "🗳️").embeds[0].description or "")


@pytest.mark.rostra(script=TIE)
async def test_with_humans_off_there_is_no_ballot_to_react_on(world: World) -> None:
    await world.start(humans="off")

    ballot = card(world.thread(), "🗳️")
    assert ballot.reactions == []
    closed = _closed(await world.events())
    assert closed.tie_broken_by == "default"
