"""People vote with reactions on the vote card: early reactions count when the window opens, the
newest reaction wins, removing it withdraws it, and the bot's own reactions never count."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from core.events import SpeakerSwitched, VoteCast, VoteWithdrawn, VotingClosed
from core.session import DebateHandle
from testkit.slack_api import BOT_USER, FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    DAN,
    ERIN,
    SCRIPT,
    Harness,
    blocks_text,
    open_harness,
)

HOLD = 5.0  # the observers think for 6 s (held until the test lets them), the window lasts 30 s


def tie_script() -> dict[str, Any]:
    def vote(choice: str) -> dict[str, Any]:
        return {"vote": choice, "reason": f"I say {choice}.", "delay": HOLD + 1}

    return {**SCRIPT, "observer": [vote("keep"), vote("keep"), vote("replace"), vote("replace")]}


def people(handle: DebateHandle) -> dict[str, str]:
    return {voter: vote.choice for voter, vote in handle.state.ballots["v1"].human_votes.items()}


async def until(slack: Harness, handle: DebateHandle, expected: dict[str, str]) -> None:
    await slack.api.wait_until(lambda: people(handle) == expected, within=5)


@asynccontextmanager
async def people_voting(
    tmp_path: Path, api: FakeSlack
) -> AsyncIterator[tuple[Harness, DebateHandle, str, HeldClock]]:
    """A debate whose observers tie, its people's window on the first vote open: the harness, the
    debate, its card's ts and its clock (the window closes with `clock.release()`, at the end if the
    test did not)."""
    clock = HeldClock(hold=HOLD)
    async with open_harness(tmp_path, api, script=tie_script(), clock=clock) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: len(api.calls_to("reactions.add")) == 2 and clock.waiting == 4)
        card = api.calls_to("reactions.add")[0].args["timestamp"]
        await clock.release(4)  # the observers vote: 2–2, so the people decide
        await api.wait_until(lambda: handle.human_vote_open("v1"))
        yield slack, handle, card, clock
        if not handle.done:
            await clock.release()
        await slack.settle()


async def test_a_tie_is_decided_by_the_people_reacting(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=HOLD)
    async with open_harness(tmp_path, api, script=tie_script(), clock=clock) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: len(api.calls_to("reactions.add")) == 2 and clock.waiting == 4)
        card = api.calls_to("reactions.add")[0].args["timestamp"]

        # Before any window is open: Erin reacts early; it counts only once people may vote.
        await slack.react(ERIN, "x", card)
        assert not handle.human_vote_open("v1")

        await clock.release(4)  # the observers vote: 2–2, so the people decide
        await api.wait_until(lambda: handle.human_vote_open("v1"))
        await until(slack, handle, {ERIN: "replace"})
        assert "It's a tie: people decide!" in blocks_text(api.messages[(CHANNEL, card)])

        for person in (ALICE, BOB, CAROL):
            await slack.react(person, "white_check_mark", card)
        await until(slack, handle, {ERIN: "replace", ALICE: "keep", BOB: "keep", CAROL: "keep"})

        await slack.react(ALICE, "x", card)  # Alice changes her mind: her newest reaction counts
        await until(slack, handle, {ERIN: "replace", ALICE: "replace", BOB: "keep", CAROL: "keep"})

        await slack.react(BOB, "white_check_mark", card, added=False)  # Bob takes his vote back
        await until(slack, handle, {ERIN: "replace", ALICE: "replace", CAROL: "keep"})

        await slack.react(BOT_USER, "white_check_mark", card)  # the bot's own reactions never count
        await slack.react(DAN, "fire", card)  # not a vote
        await asyncio.sleep(0.1)
        assert people(handle) == {ERIN: "replace", ALICE: "replace", CAROL: "keep"}
        await api.wait_until(
            lambda: "People so far: ✅ Keep 1 · ❌ Replace 2" in blocks_text(api.messages[(CHANNEL, card)])
        )

        await clock.release()  # the window closes
        await slack.settle()

        events = await slack.events(handle.debate_id)
        (closed,) = [e for e in events if isinstance(e, VotingClosed)]
        assert closed.tally == {"keep": 2, "replace": 2}
        assert closed.human_tally == {"keep": 1, "replace": 2}
        assert (closed.decision, closed.tie_broken_by) == ("replace", "humans")
        assert [e.voter.id for e in events if isinstance(e, VoteCast) and e.voter.human] == [
            ERIN,
            ALICE,
            BOB,
            CAROL,
            ALICE,
        ]
        assert [e.voter.id for e in events if isinstance(e, VoteWithdrawn)] == [BOB]
        (switch,) = [e for e in events if isinstance(e, SpeakerSwitched)]

        shown = blocks_text(api.messages[(CHANNEL, card)])
        assert f"Result: {switch.old.name} is replaced" in shown
        assert "AI: ✅ Keep 2 · ❌ Replace 2" in shown
        assert "People: ✅ Keep 1 · ❌ Replace 2" in shown
        switch_posts = [m for m in slack.thread() if "steps down" in m["text"]]
        assert len(switch_posts) == 1
        assert switch.new.name in switch_posts[0]["text"]


async def test_people_vote_too_in_vote_mode(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=HOLD)
    script = {**SCRIPT, "observer": [{"vote": "keep", "reason": "Fine."}]}
    async with open_harness(tmp_path, api, script=script, clock=clock, arena={"humans": "vote"}) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: handle.human_vote_open("v1") and len(api.calls_to("reactions.add")) == 2)
        card = api.calls_to("reactions.add")[0].args["timestamp"]
        await slack.react(ALICE, "x", card)
        await until(slack, handle, {ALICE: "replace"})
        await clock.release()
        await slack.settle()
        (closed,) = [e for e in await slack.events(handle.debate_id) if isinstance(e, VotingClosed)]
        assert closed.tally == {"keep": 4, "replace": 1}
        assert closed.human_tally == {"keep": 0, "replace": 1}
        assert "The people's majority counted as one vote for replace." in blocks_text(
            api.messages[(CHANNEL, card)]
        )


async def test_a_vote_card_answered_500_still_gets_its_ballot(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=HOLD)
    script = {**SCRIPT, "observer": [{"vote": "keep", "reason": "Fine."}]}
    for _ in range(2):  # the card's post and its one re-post fail; it is posted when voting opens
        api.fail_next("chat.postMessage", status=500, error="fatal_error", when=lambda a: "Vote" in a["text"])
    async with open_harness(tmp_path, api, script=script, clock=clock, arena={"humans": "vote"}) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: handle.human_vote_open("v1") and len(api.calls_to("reactions.add")) == 2)
        [card] = [m for m in slack.thread() if m["text"].startswith("Vote")]
        assert [c.args["timestamp"] for c in api.calls_to("reactions.add")] == [card["ts"]] * 2
        await slack.react(ALICE, "x", card["ts"])
        await until(slack, handle, {ALICE: "replace"})
        await clock.release()
        await slack.settle()
        (closed,) = [e for e in await slack.events(handle.debate_id) if isinstance(e, VotingClosed)]
        assert closed.human_tally == {"keep": 0, "replace": 1}


async def test_any_format_takes_reaction_votes_with_skin_tones(tmp_path: Path, api: FakeSlack) -> None:
    """oxford's audience votes on the motion (👍 / 👎 / 🤷) before and after the debate."""
    clock = HeldClock(hold=HOLD)
    async with open_harness(
        tmp_path, api, script={"moderator": ["What is the real question?"]}, clock=clock
    ) as slack:
        await slack.mention("debate Should cities ban cars? format=oxford rounds=1 humans=vote")
        handle = await slack.wait_running()
        await api.wait_until(lambda: clock.waiting == 1 and len(api.calls_to("reactions.add")) == 3)
        card = api.calls_to("reactions.add")[0].args["timestamp"]
        assert [c.args["name"] for c in api.calls_to("reactions.add")] == ["+1", "-1", "shrug"]
        (vote_id,) = handle.state.ballots
        await slack.react(ALICE, "+1::skin-tone-3", card)
        await slack.react(BOB, "thumbsdown", card)
        await slack.react(CAROL, "shrug::skin-tone-5", card)
        await api.wait_until(lambda: len(handle.state.ballots[vote_id].human_votes) == 3)
        while True:  # the vote before, then the one after the verdict
            await api.wait_until(lambda: handle.done or clock.waiting == 1)
            if handle.done:
                break
            await clock.release()
        await slack.settle()
        closed = [e for e in await slack.events(handle.debate_id) if isinstance(e, VotingClosed)]
        assert closed[0].human_tally == {"for": 1, "against": 1, "undecided": 1}
        assert "People: 👍 For 1 · 👎 Against 1 · 🤷 Undecided 1" in blocks_text(
            api.messages[(CHANNEL, card)]
        )
