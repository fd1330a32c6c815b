"""Button ballots (`slack.ballot: buttons`) through the real Bolt app over signed HTTP: one vote per
person, a private confirmation, a changed vote, live counts on the card, no buttons once the window
closes, and votes made before and after a restart both counted."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from core.events import VotingClosed
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, BOB, CAROL, Harness, blocks_text, open_harness
from tests.adapters.slack.interactive import block_actions, interact
from tests.adapters.slack.test_resume import TIE

BUTTONS = {"ballot": "buttons"}


def vote_card(slack: Harness) -> dict[str, Any]:
    [card] = [m for m in slack.thread() if m["text"].startswith("Vote: ")]
    return card


def buttons(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        e["action_id"].removeprefix("rostra_ballot:"): e
        for b in card.get("blocks") or []
        if b["type"] == "actions" and b.get("block_id", "").startswith("rostra_ballot_")
        for e in b["elements"]
    }


async def click(slack: Harness, user: str, key: str, card: dict[str, Any] | None = None) -> str:
    card = card or vote_card(slack)
    button = buttons(card)[key]
    action = {"type": "button", "action_id": button["action_id"], "block_id": "b", "value": button["value"]}
    before = len(slack.ephemerals_to(user))
    assert (await interact(slack, block_actions(slack, user, action, message=card))).status == 200
    return await slack.told(user, before + 1)


def has_buttons(slack: Harness) -> bool:
    cards = [m for m in slack.thread() if m["text"].startswith("Vote: ")]
    return bool(cards) and bool(buttons(cards[0]))


async def tie_open(slack: Harness) -> None:
    """A debate whose first vote is a tie: the people's window opens (and waits for the test)."""
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.api.wait_until(lambda: has_buttons(slack))


async def test_one_vote_each_changeable_counted_live_and_closed(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=TIE, clock=clock, slack=BUTTONS) as slack:
        await tie_open(slack)
        assert api.calls_to("reactions.add") == []  # no seeded reactions: nothing to subtract
        card = vote_card(slack)
        assert "Click ✅ Keep or ❌ Replace" in blocks_text(card)
        assert sorted(buttons(card)) == ["keep", "replace"]
        how = blocks_text(slack.opening())
        assert "If they tie, *you decide*: click ✅ Keep or ❌ Replace on the vote card" in how
        assert "One vote each: your last click counts." in how

        assert await click(slack, ALICE, "replace") == "You voted ❌ Replace."
        assert await click(slack, ALICE, "replace") == "You already voted ❌ Replace."
        assert await click(slack, ALICE, "keep") == "You changed your vote to ✅ Keep."
        assert await click(slack, BOB, "keep") == "You voted ✅ Keep."
        assert await click(slack, CAROL, "replace") == "You voted ❌ Replace."
        await api.wait_until(lambda: buttons(vote_card(slack))["keep"]["text"]["text"].endswith("· 2"))
        assert buttons(vote_card(slack))["replace"]["text"]["text"].endswith("· 1")
        # a reaction does not count when the ballot is buttons
        await slack.react(BOB, "x", vote_card(slack)["ts"])

        open_card = copy.deepcopy(vote_card(slack))  # as a person's screen still shows it
        await clock.release()
        await slack.settle()
        handle_events = await slack.events(await slack.only_debate_id())
        (closed,) = [e for e in handle_events if isinstance(e, VotingClosed)]
        assert closed.human_tally == {"keep": 2, "replace": 1}
        assert (closed.decision, closed.tie_broken_by) == ("keep", "humans")
        assert buttons(vote_card(slack)) == {}  # gone once closed
        assert await click(slack, BOB, "replace", card=open_card) in (
            "Voting on this card has closed.",
            "This debate has ended.",
        )


async def test_button_votes_survive_a_restart(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, script=TIE, clock=HeldClock(hold=5), slack=BUTTONS) as before:
        await tie_open(before)
        assert await click(before, ALICE, "replace") == "You voted ❌ Replace."
        card = copy.deepcopy(vote_card(before))
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=TIE, clock=clock, slack=BUTTONS) as after:
        [resumed] = await after.app.resume_debates()
        await api.wait_until(lambda: resumed.human_vote_open("v1"))
        assert await click(after, BOB, "replace", card=card) == "You voted ❌ Replace."
        assert await click(after, ALICE, "replace", card=card) == "You already voted ❌ Replace."
        await clock.release()
        await after.settle()
        events = await after.events(resumed.debate_id)
        closed = next(e for e in events if isinstance(e, VotingClosed))
        assert closed.human_tally == {"keep": 0, "replace": 2}
