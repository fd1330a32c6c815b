"""Two `rostra slack` HTTP workers behind one URL, on one database: each request reaches whichever
worker the load balancer picked. A debate starts through one; people's votes are delivered to the
other and count; when the owner stops, the other takes the debate over in the same thread (after
the lease is free) and the votes cast before and after both count, each stored once.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from core.events import VoteCast, VotingClosed, VotingStarted
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, BOB, CAROL, open_harness
from tests.adapters.slack.test_ballot_buttons import vote_card
from tests.adapters.slack.test_resume import TIE

FAILOVER: dict[str, Any] = {"lease_seconds": 1, "heartbeat_seconds": 0.2, "poll_seconds": 0.1}


async def test_votes_reach_the_owner_from_either_worker_and_the_other_takes_over(
    tmp_path: Path, api: FakeSlack
) -> None:
    later = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=TIE, clock=later, storage=FAILOVER) as second:
        second.rt.enable_failover()  # as `rostra slack` does once serving
        assert await second.app.resume_debates() == []
        async with open_harness(
            tmp_path, api, script=TIE, clock=HeldClock(hold=5), storage=FAILOVER
        ) as first:
            first.rt.enable_failover()
            await first.mention("debate Should cities ban cars?")  # this request reached the first
            handle = await first.wait_running()
            await api.wait_until(lambda: handle.human_vote_open("v1"))
            await api.wait_until(lambda: len(api.calls_to("reactions.add")) == 2)  # the card is up
            ts = vote_card(first)["ts"]
            # the owner read the card as the window opened: from here on only events tell of reactions
            await api.wait_until(
                lambda: any(c.args.get("timestamp") == ts for c in api.calls_to("reactions.get"))
            )
            await second.react(ALICE, "x", ts)  # these reached the second
            await second.react(CAROL, "white_check_mark", ts)
            await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 2)
            assert second.running() is None
        # the first worker stopped (a deploy, say): the second takes the debate over
        await api.wait_until(lambda: second.running() is not None)
        taken = second.running()
        assert taken is not None and taken.debate_id == handle.debate_id
        await api.wait_until(lambda: taken.human_vote_open("v1"))
        await second.react(BOB, "x", ts)  # now the owner's own card
        await api.wait_until(lambda: len(taken.state.ballots["v1"].human_votes) == 3)
        await later.release()
        await second.settle()
        events = await second.events(handle.debate_id)
        thread = second.thread()
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 1, "replace": 2}
    assert (closed.decision, closed.tie_broken_by) == ("replace", "humans")
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    humans = [(e.voter.id, e.choice) for e in events if isinstance(e, VoteCast) and e.voter.human]
    assert sorted(humans) == [(ALICE, "replace"), (BOB, "replace"), (CAROL, "keep")]  # each once
    assert sum(isinstance(e, VotingStarted) for e in events) == 1
    cards = Counter(m["text"] for m in thread if m["text"].startswith("Vote: "))
    assert list(cards.values()) == [1]  # the taken-over debate goes on in the same thread, same card
    assert any(m["text"].startswith("The end") for m in thread)  # played to its end there
