"""A debate killed while a vote window is open resumes into that window, whatever order its log holds.

Live, a people's window may wait for its card while the AI votes are stored, or open at once; the
replay must re-enter it either way, keep the votes people cast before the kill, and count those the
card shows now (cast while no process ran). The kill is SIGKILL-like: the process gives nothing up,
its status stays `running` and its lease runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest

from bot.config import Config, Secrets
from bot.runtime import Runtime
from core import voting
from core.clock import FakeClock
from core.errors import StoreError, StoreUnavailable
from core.events import (
    DebateCompleted,
    Event,
    HumanVoteOpened,
    Notice,
    TurnCompleted,
    TurnDelta,
    VoteCast,
    VotingClosed,
    VotingStarted,
)
from core.ports import DebateRecord, EventSink
from core.replay import CARD_NOT_SHOWN_CODE
from core.session import DebateHandle, DebateResult
from core.spec import DebateSpec
from core.storage import open_store
from tests.helpers import RecordingSink, make_config, write_script

TOPIC = "Should cities ban cars?"
ARENA = {"rounds": 2, "exchanges_per_round": 1, "first_speaker": "ada", "human_window": 60}
SPLIT = {"basil": "keep", "celeste": "keep", "dario": "replace", "esme": "replace"}

Cards = Literal["at_once", "after_ai_votes", "on_opening", "never"]


class CardSink(RecordingSink):
    """A front end that reports when vote cards are shown: at once, only once the AI votes are in
    (a slow platform: the AI votes are stored before the window opens), with their window's opening
    (a resumed thread: the card found again, or delivered in the catch-up), or never."""

    reports_cards_shown = True

    def __init__(self, cards: Cards) -> None:
        super().__init__()
        self.cards = cards
        self.handle: DebateHandle | None = None
        self._voters: dict[str, int] = {}
        self._ai_votes: dict[str, int] = {}
        self.hooks.append(self._report)

    def _report(self, event: Event) -> None:
        if self.handle is None:
            return
        self.handle.delivered_up_to(event.seq)  # shown as it comes: no backlog
        if self.cards == "never":
            return
        if isinstance(event, HumanVoteOpened) and self.cards == "on_opening":
            self.handle.vote_card_shown(event.vote_id)
        if isinstance(event, VotingStarted):
            self._voters[event.vote_id] = len(event.voters)
            if self.cards == "at_once" or not event.voters:
                self.handle.vote_card_shown(event.vote_id)
        elif isinstance(event, VoteCast) and not event.voter.human and self.cards == "after_ai_votes":
            self._ai_votes[event.vote_id] = self._ai_votes.get(event.vote_id, 0) + 1
            if self._ai_votes[event.vote_id] == self._voters.get(event.vote_id, -1):
                self.handle.vote_card_shown(event.vote_id)


def config_for(tmp_path: Path, script: dict[str, Any]) -> Config:
    return make_config(tmp_path, model={"latency": 0.5, "script": str(write_script(tmp_path, script))})


async def kill_when(
    config: Config, spec: DebateSpec, cards: Cards, cut: Callable[[Event, DebateHandle], Any]
) -> str:
    """Run the debate until `cut(event, handle)` says so, then kill it: the store is left as a
    SIGKILL leaves it (status `running`, the lease of a process that is gone)."""
    reached = asyncio.Event()
    sink = CardSink(cards)
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(spec, sink, seed=4)
        sink.handle = handle

        async def watch(event: Event) -> None:
            if not reached.is_set() and await cut(event, handle):
                reached.set()

        sink.hooks.append(watch)
        ended = asyncio.ensure_future(handle.wait())
        waiting = asyncio.ensure_future(reached.wait())
        await asyncio.wait([waiting, ended], return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        assert not handle.done, "the debate ended before the cut"
        debate_id = handle.debate_id
    db = sqlite3.connect(config.storage.url.removeprefix("sqlite:///"))
    with db:
        db.execute("UPDATE debates SET status = 'running', owner = 'gone', lease_until = 0")
    db.close()
    return debate_id


OnCards = dict[str, dict[str, tuple[str, str | None]]]
"""vote id → person → (their choice, their name): what the cards show, read back by a front end."""


@asynccontextmanager
async def resumed(config: Config, sink: CardSink) -> AsyncIterator[tuple[Runtime, DebateHandle]]:
    """The killed debate picked up by a new runtime (another process), delivering into `sink`."""

    async def reattach(record: DebateRecord, bindings: dict[str, str]) -> EventSink:
        return sink

    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        [handle] = await rt.resume_debates("terminal", reattach)
        sink.handle = handle
        yield rt, handle


async def resume_with(
    config: Config, card: OnCards | None = None
) -> tuple[DebateResult, CardSink, list[Event]]:
    """Resume the killed debate; `card`: what its vote cards show now (read back by the front end)."""
    sink = CardSink("on_opening")
    async with resumed(config, sink) as (rt, handle):
        for vote_id, votes in (card or {}).items():  # the cards found again, with their votes
            handle.vote_card_shown(vote_id)
            await handle.votes_on_card(vote_id, votes)
        result = await handle.wait()
        stored = await rt.store.events(handle.debate_id)
    return result, sink, stored


def arena_script() -> dict[str, Any]:
    return {f"persona:{p}:observer": [{"vote": v, "reason": "r"}] for p, v in SPLIT.items()}


async def all_ai_votes_in(event: Event, handle: DebateHandle) -> bool:
    ballot = handle.state.ballots.get("v1")
    return ballot is not None and len(ballot.ai_votes) == 4


def assert_whole(stored: list[Event], vote_id: str, ai_voters: int) -> VotingClosed:
    """The log is whole: gap-free, every AI vote once, the vote closed once, the debate ended."""
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    ai = [e for e in stored if isinstance(e, VoteCast) and e.vote_id == vote_id and not e.voter.human]
    assert len(ai) == ai_voters and len({v.voter.id for v in ai}) == ai_voters
    [closed] = [e for e in stored if isinstance(e, VotingClosed) and e.vote_id == vote_id]
    assert isinstance(stored[-1], DebateCompleted)
    return closed


def people_vote(*, after_ai: int = 0) -> Callable[[Event, DebateHandle], Any]:
    """Ana votes `replace` when the window opens; the kill comes once `after_ai` AI votes are in too."""
    state = {"voted": False}

    async def cut(event: Event, handle: DebateHandle) -> bool:
        if isinstance(event, HumanVoteOpened) and not state["voted"]:
            await handle.cast_human_vote(event.vote_id, "u1", "replace", voter_name="Ana")
            state["voted"] = True
        ballot = handle.state.ballots.get("v1")
        ai = len(ballot.ai_votes) if ballot is not None else 0
        return state["voted"] and ai >= after_ai

    return cut


@pytest.mark.parametrize(
    ("cards", "after_ai"),
    [
        ("after_ai_votes", 4),  # the AI votes were stored before the window opened
        ("at_once", 0),  # the window opened first, the kill came before any AI vote
        ("at_once", 2),  # the window opened first, the kill came between the AI votes
    ],
)
async def test_a_kill_during_an_arena_people_vote_resumes_and_counts_votes_cast_while_down(
    tmp_path: Path, cards: Cards, after_ai: int
) -> None:
    spec = DebateSpec("arena", TOPIC, {**ARENA, "humans": "vote"})
    config = config_for(tmp_path, arena_script())
    await kill_when(config, spec, cards, people_vote(after_ai=after_ai))

    card: OnCards = {"v1": {"u1": ("replace", "Ana"), "u2": ("replace", "Bo")}}  # Bo voted while away
    result, sink, stored = await resume_with(config, card)

    assert result.reason == "max_rounds", result.detail
    closed = assert_whole(stored, "v1", ai_voters=4)
    assert closed.human_tally == {"keep": 0, "replace": 2}
    assert closed.decision == "replace"  # AI 2–2, the people's majority decided
    reopened = sink.of(HumanVoteOpened)
    assert len(reopened) == 1 and 10 <= reopened[0].window <= 60
    assert result.stats.human_votes == 2


async def test_a_slow_card_leaves_the_window_opened_before_the_ai_votes_in_the_log(tmp_path: Path) -> None:
    """The window's opening is stored when the format reaches it and its clock waits for the card
    (the AI votes stored meanwhile follow it); a kill then resumes into the window. Logs from before
    this order (AI votes first) are replayed by the parametrized case above."""
    spec = DebateSpec("arena", TOPIC, {**ARENA, "humans": "vote"})
    config = config_for(tmp_path, arena_script())
    debate_id = await kill_when(config, spec, "after_ai_votes", people_vote(after_ai=4))
    async with Runtime(config, secrets=Secrets()) as rt:
        before = await rt.store.events(debate_id)
    kinds = [e.kind for e in before if e.kind in ("vote_cast", "human_vote_opened")]
    assert kinds[0] == "human_vote_opened" and kinds.count("vote_cast") >= 4
    result, _, _ = await resume_with(config)
    assert result.reason == "max_rounds", result.detail


async def test_a_kill_while_the_window_waits_for_its_card_opens_it_once_the_card_shows(
    tmp_path: Path,
) -> None:
    spec = DebateSpec("arena", TOPIC, {**ARENA, "humans": "vote"})
    config = config_for(tmp_path, arena_script())
    await kill_when(config, spec, "never", all_ai_votes_in)
    result, sink, stored = await resume_with(config, {"v1": {"u2": ("keep", "Bo")}})
    assert result.reason == "max_rounds", result.detail
    closed = assert_whole(stored, "v1", ai_voters=4)
    assert closed.human_tally == {"keep": 1, "replace": 0} and closed.decision == "keep"
    [opened] = sink.of(HumanVoteOpened)
    # its card never showed before the kill, so its clock never ran: the whole window, less the
    # moments between the stored opening and the last AI vote (the log cannot tell them apart)
    assert 59 <= opened.window <= 60


async def test_a_window_reopened_after_a_restart_starts_its_clock_when_its_card_shows(
    tmp_path: Path,
) -> None:
    """The card never got up before the kill: after the restart the window waits for it (the
    catch-up delivers it) as a live window does, instead of running down while nobody can see it.
    Debate time is virtual here, so a clock that ran at once would close the window in moments."""
    spec = DebateSpec("arena", TOPIC, {**ARENA, "humans": "vote"})
    config = config_for(tmp_path, arena_script())
    await kill_when(config, spec, "never", all_ai_votes_in)
    sink = CardSink("never")  # the card shows only when this test says so
    async with resumed(config, sink) as (rt, handle):
        for _ in range(100):  # the window reopens (caught up), then waits for its card
            if sink.of(HumanVoteOpened):
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        assert sink.of(HumanVoteOpened) and not sink.of(VotingClosed), "closed before its card showed"
        await handle.cast_human_vote("v1", "u3", "keep", voter_name="Cy")
        handle.vote_card_shown("v1")  # the catch-up got the card up
        result = await handle.wait()
        stored = await rt.store.events(handle.debate_id)
    assert result.reason == "max_rounds", result.detail
    closed = assert_whole(stored, "v1", ai_voters=4)
    assert closed.human_tally == {"keep": 1, "replace": 0}


async def test_a_window_whose_card_cannot_show_after_a_restart_goes_on_without_people(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(voting, "CARD_WAIT", 0.3)
    monkeypatch.setattr(voting, "WAIT_STEP", 0.05)
    spec = DebateSpec("arena", TOPIC, {**ARENA, "humans": "vote"})
    config = config_for(tmp_path, arena_script())
    await kill_when(config, spec, "never", all_ai_votes_in)
    sink = CardSink("never")
    async with resumed(config, sink) as (_, handle):
        result = await asyncio.wait_for(handle.wait(), 10)
    assert result.reason == "max_rounds", result.detail
    notices = [e for e in sink.events if isinstance(e, Notice) and e.code == CARD_NOT_SHOWN_CODE]
    assert len(notices) == 1
    [reopened] = sink.of(HumanVoteOpened)
    [closed] = sink.of(VotingClosed)
    assert reopened.seq < notices[0].seq < closed.seq
    assert closed.human_tally == {"keep": 0, "replace": 0}


async def test_a_vote_left_for_a_taken_over_debate_survives_a_store_failing_as_it_is_taken_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bo votes through another process while the debate's owner lies dead; the worker taking it
    over looks for a Stop left for it (`take_stop`, as the failover's look does) while the store
    refuses writes. The vote stays in the store and counts once the debate is live (it used to be
    taken out and put back: a failure in between lost it)."""
    spec = DebateSpec("arena", TOPIC, {**ARENA, "humans": "vote"})
    config = config_for(tmp_path, arena_script())
    debate_id = await kill_when(config, spec, "at_once", people_vote())
    other = await open_store(config.storage.url, config.storage)
    bo = {"vote_id": "v1", "voter_id": "u2", "choice": "replace", "voter_name": "Bo"}
    await other.post_vote(debate_id, json.dumps(bo))
    await other.close()
    sink = CardSink("never")  # the reopened window waits until this test shows its card
    async with resumed(config, sink) as (rt, handle):

        async def refused(debate_id: str, payload: str) -> None:
            raise StoreUnavailable("the database is restarting")

        with monkeypatch.context() as faults:
            faults.setattr(rt.store, "post_vote", refused)
            with contextlib.suppress(StoreError):  # as the failover's look: logged, not raised
                await rt.manager.take_stop(debate_id)
        for _ in range(200):
            if sink.of(HumanVoteOpened) and not handle.catching_up:
                break
            await asyncio.sleep(0.02)
        await rt.manager.deliver_votes(debate_id)  # as the vote loop's next wake
        handle.vote_card_shown("v1")
        result = await handle.wait()
        stored = await rt.store.events(debate_id)
    assert result.reason == "max_rounds", result.detail
    closed = assert_whole(stored, "v1", ai_voters=4)
    assert closed.human_tally == {"keep": 0, "replace": 2}  # Ana's, from before the kill, and Bo's


async def test_a_stop_left_while_no_process_ran_the_debate_ends_it_as_it_resumes(tmp_path: Path) -> None:
    """Someone stopped the debate through another worker while its owner lay dead: the worker that
    resumes it applies the Stop before the debate runs again, so the turn the owner died in is closed
    as cut short, not spoken again, and no new turn starts."""
    spec = DebateSpec("arena", TOPIC, {**ARENA, "humans": "off"})
    config = config_for(tmp_path, arena_script())

    async def mid_turn(event: Event, handle: DebateHandle) -> bool:
        return isinstance(event, TurnDelta)

    debate_id = await kill_when(config, spec, "at_once", mid_turn)
    other = await open_store(config.storage.url, config.storage)
    await other.post_vote(debate_id, json.dumps({"control": "stop", "reason": "stopped by Ana"}))
    result, _, stored = await resume_with(config)
    assert (result.reason, result.detail) == ("stopped", "stopped by Ana")
    assert [t.interrupted for t in stored if isinstance(t, TurnCompleted)] == [True]
    assert await other.waiting_votes(debate_id) == []  # taken with the Stop
    await other.close()


async def test_a_kill_during_an_arena_tie_window_resumes_into_it(tmp_path: Path) -> None:
    spec = DebateSpec("arena", TOPIC, {**ARENA, "humans": "tiebreak"})
    config = config_for(tmp_path, arena_script())
    await kill_when(config, spec, "at_once", people_vote())
    result, sink, stored = await resume_with(
        config, {"v1": {"u1": ("replace", "Ana"), "u2": ("replace", "Bo")}}
    )
    assert result.reason == "max_rounds", result.detail
    closed = assert_whole(stored, "v1", ai_voters=4)
    assert closed.human_tally == {"keep": 0, "replace": 2} and closed.tie_broken_by == "humans"
    assert [w.reason for w in sink.of(HumanVoteOpened)] == ["tie"]


async def test_a_kill_during_an_oxford_audience_vote_resumes_into_it(tmp_path: Path) -> None:
    spec = DebateSpec("oxford", TOPIC, {"humans": "vote", "human_window": 30})
    config = config_for(tmp_path, {})

    async def audience(event: Event, handle: DebateHandle) -> bool:
        if isinstance(event, HumanVoteOpened) and event.vote_id == "audience-before":
            await handle.cast_human_vote(event.vote_id, "u1", "for", voter_name="Ana")
            return True
        return False

    await kill_when(config, spec, "at_once", audience)
    card: OnCards = {"audience-before": {"u1": ("against", "Ana"), "u2": ("for", "Bo"), "u3": ("for", "Cy")}}
    result, sink, stored = await resume_with(config, card)
    assert result.reason == "completed", result.detail
    closed = assert_whole(stored, "audience-before", ai_voters=0)
    assert closed.human_tally == {"for": 2, "against": 1, "undecided": 0}  # Ana changed her mind meanwhile
    assert sink.of(HumanVoteOpened)[0].vote_id == "audience-before"


async def test_a_kill_during_a_council_tie_resumes_into_it(tmp_path: Path) -> None:
    proposals = {
        "ada": "Trams first.",
        "dario": "Tolls.",
        "esme": "Car-free Sundays.",
        "kit": "Parking caps.",
    }
    picks = {"ada": "p4", "dario": "p2", "esme": "p2", "kit": "p4"}
    script = {
        f"persona:{pid}:council": [text, {"choice": picks[pid], "reason": "r"}]
        for pid, text in proposals.items()
    }
    spec = DebateSpec("council", TOPIC, {"rounds": 0, "humans": "tiebreak"})
    config = config_for(tmp_path, script)

    async def tie(event: Event, handle: DebateHandle) -> bool:
        if isinstance(event, HumanVoteOpened):
            await handle.cast_human_vote(event.vote_id, "u1", "p4", voter_name="Ana")
            return True
        return False

    await kill_when(config, spec, "at_once", tie)
    result, _, stored = await resume_with(config, {"v1": {"u1": ("p4", "Ana"), "u2": ("p4", "Bo")}})
    assert result.reason == "completed", result.detail
    closed = assert_whole(stored, "v1", ai_voters=4)
    assert closed.human_tally == {"p2": 0, "p4": 2}
    assert closed.decision == "p4" and closed.tie_broken_by == "humans"
