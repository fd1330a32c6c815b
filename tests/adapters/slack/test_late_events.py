"""Slack in HTTP mode: events Slack could not deliver (the app's URL unreachable for a while: its
load balancer down, say, while every worker stays up) come again only with Slack's retries, a minute
or more later, after a vote window may have closed. No worker can tell they are missing, so as a
window closes its card is read once more: the result counts what the card shows, and the late
events change nothing after. (Before, the window closed without them.)"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from adapters.slack.ballots.reactions import LAST_LOOK_WAIT
from core.events import VoteCast, VoteWithdrawn, VotingClosed
from testkit.slack_api import FakeSlack
from testkit.slack_world import envelope, reaction_event, sign
from tests.adapters.slack.conftest import ALICE, BOB, CAROL, CHANNEL, blocks_text
from tests.adapters.slack.test_votes import people, people_voting, until


async def test_reactions_whose_events_come_after_the_window_count_as_the_card_shows_them(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with people_voting(tmp_path, api) as (slack, handle, card, clock):
        await slack.react(BOB, "white_check_mark", card)  # delivered: Bob votes keep
        await until(slack, handle, {BOB: "keep"})

        # the app's URL cannot be reached: Slack keeps the reactions; their events wait for its retries
        late = [
            reaction_event(True, ALICE, "x", card),
            reaction_event(True, CAROL, "x", card),
            reaction_event(False, BOB, "white_check_mark", card),
        ]
        api.react(CHANNEL, card, "x", ALICE)
        api.react(CHANNEL, card, "x", CAROL)
        api.react(CHANNEL, card, "white_check_mark", BOB, added=False)
        assert people(handle) == {BOB: "keep"}

        await clock.release()  # the window's time is up before Slack tries again
        await slack.settle()
        events = await slack.events(handle.debate_id)
        (closed,) = [e for e in events if isinstance(e, VotingClosed)]
        assert closed.human_tally == {"keep": 0, "replace": 2}
        assert (closed.decision, closed.tie_broken_by) == ("replace", "humans")
        assert [e.voter.id for e in events if isinstance(e, VoteWithdrawn)] == [BOB]
        assert "People: ✅ Keep 0 · ❌ Replace 2" in blocks_text(api.messages[(CHANNEL, card)])

        for event in late:  # Slack's retries, a minute later: the vote is closed; nothing changes
            body = json.dumps(envelope(event))
            retry = {**sign(body), "X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_error"}
            response = await slack.post(body, "application/json", retry)
            assert response.status == 200
        await slack.settle()
        after = await slack.events(handle.debate_id)
        assert [e for e in after if isinstance(e, VoteCast | VoteWithdrawn)] == [
            e for e in events if isinstance(e, VoteCast | VoteWithdrawn)
        ]
        assert "People: ✅ Keep 0 · ❌ Replace 2" in blocks_text(api.messages[(CHANNEL, card)])


@pytest.mark.slow
async def test_a_card_slack_does_not_answer_for_as_the_window_closes_closes_it_with_the_votes_seen(
    tmp_path: Path, api: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    """Slack takes the card's read and never answers: the window is not held open past
    `LAST_LOOK_WAIT` (slack_sdk would wait 30 s a try); the votes whose events came count."""
    async with people_voting(tmp_path, api) as (slack, handle, card, clock):
        await api.wait_until(lambda: len(api.calls_to("reactions.get")) == 1)  # the window's opening read
        await slack.react(BOB, "white_check_mark", card)
        await until(slack, handle, {BOB: "keep"})
        hung = api.hold_next("reactions.get")

        with caplog.at_level(logging.WARNING, logger="adapters.slack.ballots.reactions"):
            await clock.release()
            await slack.settle()  # within its 20 s: the read is given up after LAST_LOOK_WAIT
        assert hung.held
        (closed,) = [e for e in await slack.events(handle.debate_id) if isinstance(e, VotingClosed)]
        assert closed.human_tally == {"keep": 1, "replace": 0}
        assert f"did not say what is on its card within {LAST_LOOK_WAIT:.0f} s" in caplog.text
        assert "People: ✅ Keep 1 · ❌ Replace 0" in blocks_text(api.messages[(CHANNEL, card)])
