"""A vote card whose ballot Slack refuses (reactions.add errors): the reactions are tried once more,
ahead of anything else, when the window opens; a ballot that cannot be shown makes the window go on
as if nobody voted, and the thread is told once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.events import Notice, VotingClosed
from core.voting import CARD_NOT_SHOWN
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, CHANNEL, SCRIPT, blocks_text, open_harness

HOLD = 5.0
ONE_OBSERVER = {**SCRIPT, "observer": [{"vote": "keep", "reason": "Fine."}]}


def _refuse_reactions(api: FakeSlack, times: int) -> None:
    for _ in range(times):
        api.fail_next("reactions.add", status=200, error="missing_scope")


async def test_a_ballot_refused_once_is_tried_again_and_the_window_counts(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=HOLD)
    _refuse_reactions(api, 1)
    async with open_harness(
        tmp_path, api, script=ONE_OBSERVER, clock=clock, arena={"humans": "vote"}
    ) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()

        def ballot() -> set[str]:
            cards = [m for m in slack.thread() if m["text"].startswith("Vote")]
            return {
                name for c in cards for name, who in api.reactions.get((CHANNEL, c["ts"]), {}).items() if who
            }

        await api.wait_until(lambda: handle.human_vote_open("v1") and ballot() == {"white_check_mark", "x"})
        [card] = [m for m in slack.thread() if m["text"].startswith("Vote")]
        added = [c.args["name"] for c in api.calls_to("reactions.add")]
        assert added == ["white_check_mark", "x", "white_check_mark"]  # refused once, tried again
        await slack.react(ALICE, "x", card["ts"])
        await api.wait_until(lambda: ALICE in handle.state.ballots["v1"].human_votes, within=5)
        await clock.release()
        await slack.settle()
        events = await slack.events(handle.debate_id)
    (closed,) = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 1}
    assert not [e for e in events if isinstance(e, Notice)]
    assert not [m for m in slack.thread() if "Slack refused" in m["text"]]


async def test_a_ballot_that_cannot_be_shown_goes_on_as_if_nobody_voted_and_says_so_once(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=HOLD)
    _refuse_reactions(api, 20)
    async with open_harness(
        tmp_path, api, script=ONE_OBSERVER, clock=clock, arena={"humans": "vote"}, limits={"max_rounds": 2}
    ) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await asyncio.wait_for(handle.wait(), 30)  # no window waits on people: the debate runs on
        await slack.settle()
        events = await slack.events(handle.debate_id)
        thread = slack.thread()
    (closed,) = [e for e in events if isinstance(e, VotingClosed)]
    assert sum(closed.human_tally.values()) == 0
    assert closed.tally == {"keep": 4, "replace": 0}
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.code for n in notices] == ["vote_card_not_shown"]
    said = [m for m in thread if CARD_NOT_SHOWN in blocks_text(m) or CARD_NOT_SHOWN in m["text"]]
    assert len(said) == 1
    assert not [m for m in thread if "Slack refused" in m["text"]]  # said once, not also as a failure
