"""Votes that reach the Slack worker which does not run the debate (two HTTP workers, one database).

Two real Bolt apps over signed HTTP share one SQLite file, as two workers behind one URL would. The
debate starts through one (the owner); people's reactions and clicks are delivered to the other,
which finds the card through the store and hands each vote on. The owner's debate counts them and
its log holds each VoteCast once.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.serve import run_socket_mode
from core.events import HumanVoteOpened, VoteCast, VoteWithdrawn, VotingClosed
from testkit.slack_api import FakeSlack
from testkit.slack_world import APP_TOKEN, CHANNEL, envelope, reaction_event
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, BOB, CAROL, DAN, ERIN, Harness, open_harness
from tests.adapters.slack.interactive import block_actions, interact
from tests.adapters.slack.test_ballot_buttons import BUTTONS, buttons, click, has_buttons, vote_card
from tests.adapters.slack.test_resume import TIE
from tests.database_away import database_away


async def card_read(owner: Harness) -> str:
    """The vote card's ts, once the owner has read the card (it does as the window opens)."""
    ts = str(vote_card(owner)["ts"])
    calls = owner.api.calls_to
    await owner.api.wait_until(lambda: any(c.args.get("timestamp") == ts for c in calls("reactions.get")))
    return ts


def human_votes(events: list[Any]) -> list[tuple[str, str]]:
    return [(e.voter.id, e.choice) for e in events if isinstance(e, VoteCast) and e.voter.human]


async def window_open(owner: Harness, other: Harness) -> str:
    """Start the debate through the owner; its people's window opens. Returns the debate id."""
    await owner.mention("debate Should cities ban cars?")
    handle = await owner.wait_running()
    await owner.api.wait_until(lambda: handle.human_vote_open("v1"))
    await owner.api.wait_until(lambda: any(m["text"].startswith("Vote: ") for m in owner.thread()))
    assert other.running() is None  # the other worker does not run it
    return handle.debate_id


async def test_reactions_delivered_to_the_other_worker_count_in_the_owners_debate(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=5)
    async with (
        open_harness(tmp_path, api, script=TIE, clock=clock) as owner,
        open_harness(tmp_path, api, script=TIE) as other,
    ):
        owner.rt.enable_failover()  # as `rostra slack` does: takes the votes others leave in the store
        debate_id = await window_open(owner, other)
        handle = owner.running()
        assert handle is not None
        await api.wait_until(lambda: len(api.calls_to("reactions.add")) == 2)  # the card's own
        ts = await card_read(owner)  # from here on only events tell the owner of reactions
        await other.react(BOB, "white_check_mark", ts)
        await other.react(ALICE, "white_check_mark", ts)
        await other.react(ALICE, "x", ts)  # her newer reaction is her vote
        await other.react(BOB, "white_check_mark", ts, added=False)  # his is taken back
        await other.react(CAROL, "x", ts)
        await other.react(DAN, "white_check_mark", ts)
        await other.react(DAN, "x", ts)
        await other.react(DAN, "x", ts, added=False)  # his ✅ is still on the card: it counts again
        await other.react(ERIN, "x", ts)

        def held() -> dict[str, str]:
            return {p: v.choice for p, v in handle.state.ballots["v1"].human_votes.items()}

        expected = {ALICE: "replace", CAROL: "replace", DAN: "keep", ERIN: "replace"}
        try:
            await api.wait_until(lambda: held() == expected, within=30)
        except TimeoutError:  # say what the owner counted instead
            raise AssertionError(f"the owner holds {held()}, not {expected}") from None
        await clock.release()
        await owner.settle()
        events = await owner.events(debate_id)
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 1, "replace": 3}
    assert (closed.decision, closed.tie_broken_by) == ("replace", "humans")
    # each person's vote as their reactions changed it, in the order made (None: withdrawn)
    changes: dict[str, list[str | None]] = {
        BOB: ["keep", None],
        ALICE: ["keep", "replace"],
        CAROL: ["replace"],
        DAN: ["keep", "replace", "keep"],
        ERIN: ["replace"],
    }
    for person, made in changes.items():  # in the owner's log, each change once, ending on the card's
        stored = stored_changes(events, person)
        assert (stored[-1] if stored else None) == made[-1], (person, stored)
        assert is_in_order_within(stored, made), (person, stored)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


def stored_changes(events: list[Any], person: str) -> list[str | None]:
    """A person's vote as the log records each change of it (None: withdrawn)."""
    return [
        e.choice if isinstance(e, VoteCast) else None
        for e in events
        if isinstance(e, VoteCast | VoteWithdrawn) and e.voter.human and e.voter.id == person
    ]


def is_in_order_within(stored: list[str | None], made: list[str | None]) -> bool:
    """Whether the stored changes are some of those made, in their order, none stored twice in a row.
    Events are handled concurrently: one handled after a newer one changes nothing
    (`adapters.reaction_ballot`), so a change in between may never be stored."""
    rest = iter(made)
    return all(change in rest for change in stored) and all(a != b for a, b in itertools.pairwise(stored))


async def test_one_persons_reactions_split_between_the_workers_count_as_the_card_shows_them(
    tmp_path: Path, api: FakeSlack
) -> None:
    """Slack hands each event to either worker: a reaction may be made through one and taken back
    through the other. The vote is what the card shows, whichever worker heard of which change."""
    clock = HeldClock(hold=5)
    async with (
        open_harness(tmp_path, api, script=TIE, clock=clock) as owner,
        open_harness(tmp_path, api, script=TIE) as other,
    ):
        owner.rt.enable_failover()
        await window_open(owner, other)
        handle = owner.running()
        assert handle is not None
        ts = await card_read(owner)

        def held() -> dict[str, str]:
            return {p: v.choice for p, v in handle.state.ballots["v1"].human_votes.items()}

        await other.react(BOB, "white_check_mark", ts)
        await api.wait_until(lambda: held() == {BOB: "keep"})
        await owner.react(BOB, "white_check_mark", ts, added=False)  # taken back through the owner
        await owner.react(ALICE, "white_check_mark", ts)
        await other.react(ALICE, "x", ts)
        await api.wait_until(lambda: held().get(ALICE) == "replace")
        await owner.react(ALICE, "x", ts, added=False)  # her ✅ is still on the card: it is her vote
        await other.react(CAROL, "x", ts)
        expected = {ALICE: "keep", CAROL: "replace"}
        try:
            await api.wait_until(lambda: held() == expected, within=30)
        except TimeoutError:
            raise AssertionError(f"the owner holds {held()}, not {expected}") from None
        await clock.release()
        await owner.settle()


@pytest.mark.slow
async def test_reactions_delivered_to_the_other_worker_while_the_database_is_away_count_once_it_is_back(
    tmp_path: Path, api: FakeSlack
) -> None:
    """The database locked 8 s by another process's write: reactions reaching the worker that does
    not run the debate meanwhile wait for it and are counted by the owner once it is back, in their
    order (they were lost: the vote could not be stored, and Slack does not send an event again)."""
    clock = HeldClock(hold=5)
    async with (
        open_harness(tmp_path, api, script=TIE, clock=clock) as owner,
        open_harness(tmp_path, api, script=TIE, storage={"busy_timeout": 0.5}) as other,
    ):
        owner.rt.enable_failover()
        await window_open(owner, other)
        handle = owner.running()
        assert handle is not None
        ts = await card_read(owner)
        held = asyncio.Event()
        away = asyncio.ensure_future(database_away(owner.rt.config.storage.url, 8.0, held))
        await asyncio.wait_for(held.wait(), 10)
        await other.react(BOB, "white_check_mark", ts)
        await other.react(ALICE, "white_check_mark", ts)
        await other.react(ALICE, "x", ts)  # her newer reaction is her vote
        assert not away.done()  # all of it while the database was away
        await away

        def counted() -> dict[str, str]:
            return {p: v.choice for p, v in handle.state.ballots["v1"].human_votes.items()}

        expected = {BOB: "keep", ALICE: "replace"}
        try:
            await api.wait_until(lambda: counted() == expected, within=30)
        except TimeoutError:
            raise AssertionError(f"the owner holds {counted()}, not {expected}") from None
        await clock.release()
        await owner.settle()


async def test_votes_passed_on_while_the_owner_reads_the_card_are_not_taken_back(
    tmp_path: Path, api: FakeSlack
) -> None:
    """The owner reads the card when the window opens; reactions reaching it through the store while
    that read is under way are newer than what the read shows, so they stand, and stay known: one
    taken back afterwards takes the vote back."""
    clock = HeldClock(hold=5)
    read = api.hold_next("reactions.get")  # Slack answers the owner's read late ...
    async with (
        open_harness(tmp_path, api, script=TIE, clock=clock) as owner,
        open_harness(tmp_path, api, script=TIE) as other,
    ):
        owner.rt.enable_failover()
        await owner.mention("debate Should cities ban cars?")
        handle = await owner.wait_running()
        await api.wait_until(lambda: read.held)
        ts = vote_card(owner)["ts"]
        # ... with the card as it was before these reactions (the read was taken first): Dan's only
        api.react(CHANNEL, ts, "white_check_mark", DAN)
        await other.event(reaction_event(True, ALICE, "x", ts, CHANNEL))
        await other.event(reaction_event(True, BOB, "white_check_mark", ts, CHANNEL))
        await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 2)
        read.gate.set()
        await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 3)  # the read counted
        api.react(CHANNEL, ts, "x", ALICE)  # the card shows theirs by now (read again as it closes)
        api.react(CHANNEL, ts, "white_check_mark", BOB)
        api.react(CHANNEL, ts, "x", ALICE, added=False)
        await other.event(reaction_event(False, ALICE, "x", ts, CHANNEL))  # the owner saw hers: it goes
        await api.wait_until(lambda: ALICE not in handle.state.ballots["v1"].human_votes)
        await clock.release()
        await owner.settle()
        events = await owner.events(handle.debate_id)
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 2, "replace": 0}
    assert sorted(human_votes(events)) == [(ALICE, "replace"), (BOB, "keep"), (DAN, "keep")]
    assert sum(isinstance(e, VoteWithdrawn) for e in events) == 1  # hers, when she took it back


async def test_a_click_delivered_to_the_other_worker_counts_and_is_confirmed(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=5)
    async with (
        open_harness(tmp_path, api, script=TIE, clock=clock, slack=BUTTONS) as owner,
        open_harness(tmp_path, api, script=TIE, slack=BUTTONS) as other,
    ):
        owner.rt.enable_failover()
        debate_id = await window_open(owner, other)
        await api.wait_until(lambda: has_buttons(owner))
        assert await click(other, ALICE, "replace") == "You voted ❌ Replace."
        assert await click(other, BOB, "keep") == "You voted ✅ Keep."
        assert await click(other, CAROL, "replace") == "You voted ❌ Replace."
        open_card = copy.deepcopy(vote_card(owner))  # as a person's screen still shows it
        handle = owner.running()
        assert handle is not None
        await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 3)
        await clock.release()
        await owner.settle()
        events = await owner.events(debate_id)
        late = await click(other, BOB, "replace", card=open_card)
        assert late == "This debate has ended."  # a click on a stale screen: no debate runs there now
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 1, "replace": 2}
    assert sorted(human_votes(events)) == [(ALICE, "replace"), (BOB, "keep"), (CAROL, "replace")]
    assert sum(isinstance(e, HumanVoteOpened) for e in events) == 1


@pytest.mark.slow
async def test_a_click_delivered_to_the_other_worker_while_the_database_is_away_waits_and_says_so(
    tmp_path: Path, api: FakeSlack
) -> None:
    """The database locked 30 s by another process's write: a click reaching the worker that does
    not run the debate waits for it (a vote refused there was lost). The person is told at once that
    it waits, then that they voted, once it is back; the owner counts it."""
    clock = HeldClock(hold=5)
    async with (
        open_harness(tmp_path, api, script=TIE, clock=clock, slack=BUTTONS) as owner,
        open_harness(tmp_path, api, script=TIE, slack=BUTTONS, storage={"busy_timeout": 0.5}) as other,
    ):
        owner.rt.enable_failover()
        await window_open(owner, other)
        await api.wait_until(lambda: has_buttons(owner))
        handle = owner.running()
        assert handle is not None
        held = asyncio.Event()
        away = asyncio.ensure_future(database_away(owner.rt.config.storage.url, 30.0, held))
        await asyncio.wait_for(held.wait(), 10)

        card = vote_card(owner)
        button = buttons(card)["replace"]
        action = {
            "type": "button",
            "action_id": button["action_id"],
            "block_id": "b",
            "value": button["value"],
        }
        assert (await interact(other, block_actions(other, ALICE, action, message=card))).status == 200
        waits = await other.told(ALICE)
        assert waits.startswith("The database isn't answering right now. Your vote is kept")
        assert not away.done()  # told while the database was away
        await away
        await api.wait_until(lambda: len(other.ephemerals_to(ALICE)) == 2, within=30)
        assert other.ephemerals_to(ALICE)[1] == "You voted ❌ Replace."
        await api.wait_until(lambda: ALICE in handle.state.ballots["v1"].human_votes, within=30)
        await clock.release()
        await owner.settle()


async def test_on_postgres_a_click_reaches_the_owner_through_notify(
    tmp_path: Path, api: FakeSlack, postgres_url: str
) -> None:
    """The same on Postgres (the real server from tests/pg.py): the owner hears of the vote through
    LISTEN/NOTIFY, with polling set far beyond the test's patience."""
    storage = {"url": postgres_url, "poll_seconds": 60}
    clock = HeldClock(hold=5)
    async with (
        open_harness(tmp_path, api, script=TIE, clock=clock, slack=BUTTONS, storage=storage) as owner,
        open_harness(tmp_path, api, script=TIE, slack=BUTTONS, storage=storage) as other,
    ):
        owner.rt.enable_failover()
        debate_id = await window_open(owner, other)
        await api.wait_until(lambda: has_buttons(owner))
        assert await click(other, ALICE, "replace") == "You voted ❌ Replace."
        handle = owner.running()
        assert handle is not None
        await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 1, within=5)
        await clock.release()
        await owner.settle()
        events = await owner.events(debate_id)
    assert human_votes(events) == [(ALICE, "replace")]
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 1}


@pytest.mark.slow
async def test_reactions_the_other_workers_dropped_socket_missed_are_read_by_the_owner(
    tmp_path: Path, api: FakeSlack
) -> None:
    """Slack spreads events over every worker's socket. The other worker's connection drops while
    people decide a tie; Slack keeps the reactions made meanwhile and sends their events again only a
    minute or more later. Once that socket is back, the owner is asked through the store to read its
    open card, and counts it as it stands. (Before, only the reconnected worker's own debates were
    read again: the owner's window closed without those reactions.)"""
    clock = HeldClock(hold=5)
    async with (
        open_harness(tmp_path, api, script=TIE, clock=clock) as owner,
        open_harness(tmp_path, api, script=TIE) as other,
    ):
        owner.rt.enable_failover()
        stop = asyncio.Event()
        serving = asyncio.create_task(run_socket_mode(other.app, APP_TOKEN, stop))
        try:
            await api.wait_until(lambda: api.ws is not None)
            debate_id = await window_open(owner, other)
            handle = owner.running()
            assert handle is not None
            ts = await card_read(owner)

            def held() -> dict[str, str]:
                return {p: v.choice for p, v in handle.state.ballots["v1"].human_votes.items()}

            api.react(CHANNEL, ts, "white_check_mark", BOB)
            await api.push_envelope("events_api", envelope(reaction_event(True, BOB, "white_check_mark", ts)))
            await api.wait_until(lambda: held() == {BOB: "keep"})  # through the other's socket

            api.refuse_sockets = True  # the other's connection drops and cannot be made for a while
            dropped = api.ws
            assert dropped is not None
            await dropped.close()
            api.react(CHANNEL, ts, "x", ALICE)  # stored by Slack; no event reaches either worker
            api.react(CHANNEL, ts, "x", CAROL)
            api.react(CHANNEL, ts, "white_check_mark", BOB, added=False)
            await asyncio.sleep(1.0)
            assert held() == {BOB: "keep"}

            api.refuse_sockets = False
            await api.wait_until(lambda: api.ws is not None and api.ws is not dropped, within=30)
            expected = {ALICE: "replace", CAROL: "replace"}
            try:
                await api.wait_until(lambda: held() == expected, within=30)
            except TimeoutError:
                raise AssertionError(f"the owner holds {held()}, not {expected}") from None
            await clock.release()  # the window closes
            await owner.settle()
            events = await owner.events(debate_id)
        finally:
            stop.set()
            await serving
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 2}
    assert (closed.decision, closed.tie_broken_by) == ("replace", "humans")
    assert [e.voter.id for e in events if isinstance(e, VoteWithdrawn)] == [BOB]
