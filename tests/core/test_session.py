"""What every debate guarantees: gap-free seq, store before sink, stop, and one error funnel."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.runtime import Runtime
from core.events import (
    DebateCompleted,
    Event,
    Notice,
    TurnCompleted,
    TurnDelta,
    VoteCast,
    VotingClosed,
    VotingStarted,
)
from core.formats.arena import Arena
from core.session import DebateHandle
from tests.core.runs import run_debate


async def test_seq_is_gap_free_and_the_store_holds_exactly_what_the_sink_saw(tmp_path: Path) -> None:
    run = await run_debate(tmp_path, options={"rounds": 2, "exchanges_per_round": 2})
    seqs = [e.seq for e in run.sink.events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert [e.model_dump() for e in run.stored] == [e.model_dump() for e in run.sink.events]
    assert {e.debate_id for e in run.stored} == {run.debate_id}


async def test_every_event_is_in_the_store_before_the_sink_sees_it(tmp_path: Path) -> None:
    missing: list[int] = []

    async def check(rt: Runtime, handle: DebateHandle, event: Event) -> None:
        stored = await rt.store.events(handle.debate_id)
        if not stored or stored[-1].seq != event.seq:
            missing.append(event.seq)

    run = await run_debate(tmp_path, options={"rounds": 2, "exchanges_per_round": 1}, hook=check)
    assert len(run.sink.events) > 20
    assert missing == []


async def test_a_sink_that_votes_from_inside_emit_keeps_one_order(tmp_path: Path) -> None:
    """Adapters cast the votes already on a ballot when its window opens, from inside emit."""

    async def vote_on_open(rt: Runtime, handle: DebateHandle, event: Event) -> None:
        if event.kind == "human_vote_opened":
            await handle.cast_human_vote(event.vote_id, "u1", "replace")

    script = {
        f"persona:{p}:observer": [{"vote": v, "reason": "r"}]
        for p, v in {"basil": "keep", "celeste": "keep", "dario": "replace", "esme": "replace"}.items()
    }
    run = await run_debate(
        tmp_path,
        script=script,
        hook=vote_on_open,
        options={"rounds": 2, "exchanges_per_round": 1, "first_speaker": "ada", "humans": "tiebreak"},
    )
    assert [e.seq for e in run.sink.events] == list(range(1, len(run.sink.events) + 1))
    human = [v for v in run.of(VoteCast) if v.voter.human]
    assert len(human) == 1
    assert run.closed("v1").decision == "replace"


async def test_stopping_mid_turn_closes_the_turn_and_the_debate(tmp_path: Path) -> None:
    async def stop_early(rt: Runtime, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, TurnDelta) and len(handle.state.turns) == 1:
            await handle.stop("stopped by Ana")

    run = await run_debate(tmp_path, options={"rounds": 3, "exchanges_per_round": 2}, hook=stop_early)
    assert run.result.reason == "stopped" and run.result.detail == "stopped by Ana"
    interrupted = run.turns()[-1]
    assert interrupted.interrupted and interrupted.text.endswith("…")
    [done] = run.of(DebateCompleted)
    assert done.reason == "stopped" and "stopped" in done.summary
    assert run.record is not None and run.record.status == "stopped"
    assert not run.of(VotingStarted)


async def test_stopping_during_a_vote_cancels_the_vote(tmp_path: Path) -> None:
    async def stop_in_vote(rt: Runtime, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, VotingStarted):
            await handle.stop("enough")

    run = await run_debate(tmp_path, options={"rounds": 2, "exchanges_per_round": 1}, hook=stop_in_vote)
    closed = run.of(VotingClosed)
    assert closed and closed[-1].decision == "none"
    assert run.result.reason == "stopped"


async def test_an_error_in_the_format_still_completes_the_debate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken_vote(self: Arena, round_no: int, active: object) -> object:
        raise RuntimeError("the ballot box caught fire")

    monkeypatch.setattr(Arena, "_vote", broken_vote)
    run = await run_debate(tmp_path, options={"rounds": 2, "exchanges_per_round": 1})
    assert run.result.reason == "failed"
    assert any(n.level == "error" and "ballot box" in n.message for n in run.of(Notice))
    [done] = run.of(DebateCompleted)
    assert done.reason == "failed" and done.stats.turns == 2
    assert run.record is not None and run.record.status == "failed"


async def test_a_sink_that_raises_does_not_stop_the_debate(tmp_path: Path) -> None:
    def explode(rt: Runtime, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, TurnCompleted):
            raise RuntimeError("the channel is on fire")

    run = await run_debate(tmp_path, options={"rounds": 1, "exchanges_per_round": 1}, hook=explode)
    assert run.result.reason == "max_rounds"
    assert run.record is not None and run.record.status == "completed"


async def test_shutting_the_runtime_down_leaves_running_debates_interrupted(tmp_path: Path) -> None:
    from core.clock import RealClock
    from core.spec import DebateSpec
    from tests.helpers import RecordingSink, make_config

    config = make_config(tmp_path, model={"latency": 0.05})
    async with Runtime(config, clock=RealClock()) as rt:
        handle = await rt.start_debate(
            DebateSpec("arena", "Tabs or spaces?", {"humans": "off"}), RecordingSink()
        )
        debate_id = handle.debate_id
    async with Runtime(config) as rt:
        record = await rt.store.get_debate(debate_id)
    assert record is not None and record.status == "interrupted"


async def test_a_stop_landing_while_an_event_is_being_written_still_closes_the_debate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop cancels the debate's task; a write in flight must finish first (it used to wedge)."""
    import asyncio

    from core.clock import RealClock
    from core.spec import DebateSpec
    from core.storage.sqlite import SQLiteStore
    from tests.helpers import RecordingSink, make_config

    original = SQLiteStore.append
    writing = asyncio.Event()

    async def slow_append(self: SQLiteStore, event: Event) -> None:
        await original(self, event)
        if event.kind == "turn_delta":
            writing.set()
            await asyncio.sleep(0.005)  # the stop arrives between the commit and the return

    monkeypatch.setattr(SQLiteStore, "append", slow_append)
    sink = RecordingSink()
    async with Runtime(make_config(tmp_path, model={"latency": 0.001}), clock=RealClock()) as rt:
        handle = await rt.start_debate(DebateSpec("arena", "Tabs or spaces?", {"humans": "off"}), sink)
        await writing.wait()
        await handle.stop("stopped mid-write")
        result = await asyncio.wait_for(handle.wait(), 10)
        record = await rt.store.get_debate(handle.debate_id)
        stored = await rt.store.events(handle.debate_id)
    assert result.reason == "stopped"
    assert record is not None and record.status == "stopped"
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert stored[-1].kind == "debate_completed"
