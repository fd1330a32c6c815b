"""Resuming debates from the event log: nothing lost, nothing twice, votes and clock intact."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.config import Config, Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import (
    DebateCompleted,
    Event,
    HumanVoteOpened,
    Notice,
    TurnCompleted,
    TurnDelta,
    TurnStarted,
    VoteCast,
    VotingClosed,
)
from core.ports import DebateRecord, EventSink
from core.session import DebateHandle, DebateResult
from core.spec import DebateSpec
from tests.core.runs import run_debate
from tests.helpers import RecordingSink, make_config, write_script

TOPIC = "Should cities ban cars?"
OPTIONS = {"rounds": 2, "exchanges_per_round": 2, "first_speaker": "ada", "humans": "off"}


def config_for(tmp_path: Path, script: dict[str, Any] | None = None, **overrides: Any) -> Config:
    model: dict[str, Any] = {"latency": 0.5}
    if script is not None:
        model["script"] = str(write_script(tmp_path, script))
    return make_config(tmp_path, model=model, **overrides)


async def run_until(config: Config, spec: DebateSpec, stop_when: Any) -> str:
    """Run a debate and cut it off (as a shutdown would) once `stop_when(event)` is true."""
    reached = asyncio.Event()
    sink = RecordingSink()
    sink.hooks.append(lambda e: reached.set() if stop_when(e) else None)
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(spec, sink, seed=4)
        waiting = asyncio.ensure_future(reached.wait())
        await asyncio.wait(
            [waiting, asyncio.ensure_future(handle.wait())], return_when=asyncio.FIRST_COMPLETED
        )
        waiting.cancel()
        assert not handle.done, "the debate ended before the cut"
        return handle.debate_id  # leaving the runtime interrupts it


async def resume(
    config: Config, sink: RecordingSink, attach: Any = None
) -> tuple[list[DebateHandle], list[DebateResult]]:
    async def reattach(record: DebateRecord, bindings: dict[str, str]) -> EventSink | None:
        return sink

    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handles = await rt.resume_debates("terminal", attach or reattach)
        results = [await h.wait() for h in handles]
    return handles, results


async def events_of(config: Config, debate_id: str) -> tuple[list[Event], DebateRecord | None]:
    async with Runtime(config, secrets=Secrets()) as rt:
        return await rt.store.events(debate_id), await rt.store.get_debate(debate_id)


async def uninterrupted(
    tmp_path: Path, spec: DebateSpec, script: dict[str, Any] | None = None
) -> list[Event]:
    config = config_for(tmp_path / "whole", script)
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(spec, RecordingSink(), seed=4)
        await handle.wait()
        return await rt.store.events(handle.debate_id)


def spoken(events: list[Event]) -> list[tuple[str, str, str]]:
    return [(e.turn_id, e.speaker.id, e.text) for e in events if isinstance(e, TurnCompleted)]


def figures(events: list[Event]) -> dict[str, Any]:
    done = events[-1]
    assert isinstance(done, DebateCompleted)
    stats = done.stats.model_dump()
    stats.pop("debate_seconds"), stats.pop("paused_seconds")
    return stats


async def test_a_debate_cut_mid_turn_resumes_and_ends_as_if_never_cut(tmp_path: Path) -> None:
    spec = DebateSpec("arena", TOPIC, OPTIONS)
    config = config_for(tmp_path)
    third_turn_streaming = lambda e: isinstance(e, TurnDelta) and e.turn_id == "t3"  # noqa: E731
    debate_id = await run_until(config, spec, third_turn_streaming)
    before, record = await events_of(config, debate_id)
    assert record is not None and record.status == "interrupted"
    assert isinstance(before[-1], TurnDelta | TurnStarted)

    sink = RecordingSink()
    [handle], [result] = await resume(config, sink)
    assert handle.debate_id == debate_id and result.reason == "max_rounds"
    # the channel gets only what is new: first the interrupted turn starting over
    first = sink.events[0]
    assert isinstance(first, TurnStarted) and first.turn_id == "t3" and first.attempt == 2
    assert sink.events[0].seq == before[-1].seq + 1

    after, record = await events_of(config, debate_id)
    assert record is not None and record.status == "completed"
    assert [e.seq for e in after] == list(range(1, len(after) + 1))
    whole = await uninterrupted(tmp_path, spec)
    assert spoken(after) == spoken(whole)  # every turn exactly once, the same words
    assert figures(after) == figures(whole)
    assert after[-1].stats.debate_seconds == pytest.approx(whole[-1].stats.debate_seconds, abs=0.5)  # type: ignore[union-attr]


async def test_no_model_is_asked_again_for_what_was_already_said(tmp_path: Path) -> None:
    script = {"proposition": ["P1.", "P2.", "P3.", "P4."], "opposition": ["O1.", "O2.", "O3.", "O4."]}
    spec = DebateSpec("arena", TOPIC, OPTIONS)
    config = config_for(tmp_path, script)
    debate_id = await run_until(config, spec, lambda e: isinstance(e, TurnCompleted) and e.turn_id == "t3")
    await resume(config, RecordingSink())
    after, _ = await events_of(config, debate_id)
    said = [text for _, _, text in spoken(after)][:-1]
    assert said == ["P1.", "O1.", "P2.", "O2.", "P3.", "O3.", "P4.", "O4."]  # the script kept its place


async def test_a_restart_during_a_vote_keeps_the_votes_from_before_and_counts_those_after(
    tmp_path: Path,
) -> None:
    script = {
        f"persona:{p}:observer": [{"vote": v, "reason": "r"}]
        for p, v in {"basil": "keep", "celeste": "keep", "dario": "replace", "esme": "replace"}.items()
    }
    spec = DebateSpec("arena", TOPIC, {**OPTIONS, "rounds": 2, "humans": "tiebreak", "human_window": 60})
    config = config_for(tmp_path, script)
    reached = asyncio.Event()

    async def vote_then_cut(event: Event, handle: DebateHandle) -> None:
        if isinstance(event, HumanVoteOpened):
            await handle.cast_human_vote(event.vote_id, "u1", "replace", voter_name="Ana")
            reached.set()

    sink = RecordingSink()
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(spec, sink, seed=4)
        sink.hooks.append(lambda e: vote_then_cut(e, handle))
        await reached.wait()
        debate_id = handle.debate_id
    before, _ = await events_of(config, debate_id)
    assert isinstance(before[-1], VoteCast) and before[-1].voter.human

    later = RecordingSink()
    resumed: list[DebateHandle] = []

    async def vote_after(event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            await resumed[0].cast_human_vote(event.vote_id, "u2", "replace", voter_name="Bo")

    later.hooks.append(vote_after)

    async def reattach(record: DebateRecord, bindings: dict[str, str]) -> EventSink:
        return later

    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        resumed += await rt.resume_debates("terminal", reattach)
        result = await resumed[0].wait()
    reopened = later.of(HumanVoteOpened)
    assert len(reopened) == 1 and 10 <= reopened[0].window <= 60  # the window reopens with its time left
    [closed] = [e for e in later.events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 2}  # Ana before the restart, Bo after
    assert closed.decision == "replace" and closed.tie_broken_by == "humans"
    assert result.stats.human_votes == 2 and result.stats.switches == 1


async def test_with_resume_off_an_interrupted_debate_is_closed_with_a_message(tmp_path: Path) -> None:
    spec = DebateSpec("arena", TOPIC, OPTIONS)
    config = config_for(tmp_path)
    debate_id = await run_until(config, spec, lambda e: isinstance(e, TurnDelta) and e.turn_id == "t2")
    off = config.model_copy(update={"resume": False})
    sink = RecordingSink()
    handles, _ = await resume(off, sink)
    assert handles == []
    notice = next(e for e in sink.events if isinstance(e, Notice))
    assert notice.code == "not_resumed" and "resuming is off" in notice.message
    partial = next(e for e in sink.events if isinstance(e, TurnCompleted))
    assert partial.turn_id == "t2" and partial.interrupted  # the half-said turn is closed, not left open
    assert isinstance(sink.events[-1], DebateCompleted) and sink.events[-1].reason == "interrupted"
    _, record = await events_of(config, debate_id)
    assert record is not None and record.status == "interrupted" and "resuming is off" in record.reason


async def test_a_debate_whose_channel_is_gone_is_closed_with_the_reason_stored(tmp_path: Path) -> None:
    spec = DebateSpec("arena", TOPIC, OPTIONS)
    config = config_for(tmp_path)
    debate_id = await run_until(config, spec, lambda e: isinstance(e, TurnCompleted))

    async def nowhere(record: DebateRecord, bindings: dict[str, str]) -> None:
        return None

    handles, _ = await resume(config, RecordingSink(), attach=nowhere)
    assert handles == []
    events, record = await events_of(config, debate_id)
    assert record is not None and record.status == "failed" and "channel it ran in is gone" in record.reason
    assert isinstance(events[-1], DebateCompleted)


async def test_a_debate_that_would_take_another_path_is_closed_saying_so(tmp_path: Path) -> None:
    spec = DebateSpec("arena", TOPIC, {**OPTIONS, "rounds": None, "exchanges_per_round": 1})
    config = config_for(tmp_path, limits={"max_rounds": 3})
    debate_id = await run_until(config, spec, lambda e: isinstance(e, VotingClosed) and e.vote_id == "v2")
    # meanwhile the configured cap on rounds dropped below what the debate already played
    changed = config_for(tmp_path, limits={"max_rounds": 1})
    sink = RecordingSink()
    [_], [result] = await resume(changed, sink)
    assert result.reason == "failed" and "could not be resumed" in result.detail
    assert any(
        isinstance(e, Notice) and "could not be resumed after a restart" in e.message for e in sink.events
    )
    _, record = await events_of(changed, debate_id)
    assert record is not None and record.status == "failed"


async def test_a_debate_whose_format_is_gone_cannot_resume(tmp_path: Path) -> None:
    spec = DebateSpec("arena", TOPIC, OPTIONS)
    config = config_for(tmp_path)
    debate_id = await run_until(config, spec, lambda e: isinstance(e, TurnCompleted))
    import sqlite3

    db = sqlite3.connect(tmp_path / "rostra.db")
    db.execute("UPDATE debates SET format = 'shouting' WHERE id = ?", (debate_id,))
    db.commit()
    db.close()
    sink = RecordingSink()
    handles, _ = await resume(config, sink)
    assert handles == []
    assert any(isinstance(e, Notice) and "no longer exists" in e.message for e in sink.events)


@pytest.mark.parametrize("fmt", ["oxford", "council", "panel"])
async def test_every_format_resumes_to_the_same_end(tmp_path: Path, fmt: str) -> None:
    options: dict[str, Any] = {"humans": "off"} if fmt != "panel" else {}
    if fmt == "panel":
        from core.documents import Document

        options["documents"] = [
            Document(name="a.md", text="Trams carry more people per lane than cars ever could."),
            Document(name="b.md", text="Shops near the old ring road lost a third of their trade."),
        ]
    spec = DebateSpec(fmt, TOPIC, options)
    config = config_for(tmp_path)
    debate_id = await run_until(config, spec, lambda e: isinstance(e, TurnCompleted) and e.turn_id == "t3")
    [_], [result] = await resume(config, RecordingSink())
    assert result.reason in ("completed", "max_rounds")
    after, _ = await events_of(config, debate_id)
    whole = await uninterrupted(tmp_path, spec)
    assert spoken(after) == spoken(whole)
    assert figures(after) == figures(whole)


async def test_a_front_end_that_cannot_reattach_now_leaves_the_debate_for_later(tmp_path: Path) -> None:
    spec = DebateSpec("arena", TOPIC, OPTIONS)
    config = config_for(tmp_path)
    debate_id = await run_until(config, spec, lambda e: isinstance(e, TurnCompleted))

    async def unreachable(record: DebateRecord, bindings: dict[str, str]) -> EventSink:
        raise ConnectionError("the platform is down for a moment")

    handles, _ = await resume(config, RecordingSink(), attach=unreachable)
    assert handles == []
    _, record = await events_of(config, debate_id)
    assert record is not None and record.status == "interrupted"  # untouched: it resumes next time
    [handle], [result] = await resume(config, RecordingSink())
    assert handle.debate_id == debate_id and result.reason == "max_rounds"


async def test_a_debate_that_ended_just_before_a_crash_only_has_its_status_fixed(tmp_path: Path) -> None:
    import sqlite3

    config = config_for(tmp_path)
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(DebateSpec("arena", TOPIC, {**OPTIONS, "rounds": 1}), RecordingSink())
        await handle.wait()
    db = sqlite3.connect(tmp_path / "rostra.db")  # as if the process died before the status was written
    db.execute("UPDATE debates SET status = 'running'")
    db.commit()
    db.close()
    sink = RecordingSink()
    handles, _ = await resume(config, sink)
    assert handles == [] and sink.events == []  # nothing runs again, nothing is said twice
    events, record = await events_of(config, handle.debate_id)
    assert record is not None and record.status == "completed"
    assert sum(isinstance(e, DebateCompleted) for e in events) == 1


async def test_a_vote_that_now_goes_another_way_names_the_event_not_a_task_group(tmp_path: Path) -> None:
    """The mismatch is found inside the vote's task group: the reason is still the event, not
    "ExceptionGroup: unhandled errors in a TaskGroup"."""
    script = {f"persona:{p}:observer": [{"vote": "replace", "reason": "r"}] for p in ("basil", "celeste")}
    spec = DebateSpec("arena", TOPIC, {**OPTIONS, "rounds": 2, "exchanges_per_round": 1})
    config = config_for(tmp_path, script)
    await run_until(config, spec, lambda e: isinstance(e, VotingClosed) and e.vote_id == "v1")
    # the stored answers of the vote's model calls now say otherwise (a different model, say)
    conn = sqlite3.connect(tmp_path / "rostra.db")
    with conn:
        changed = conn.execute(
            "UPDATE model_calls SET payload = replace(payload, 'replace', 'keep') WHERE key LIKE '%|vote'"
        ).rowcount
    conn.close()
    assert changed > 0
    sink = RecordingSink()
    [_], [result] = await resume(config, sink)
    assert result.reason == "failed"
    assert result.detail.startswith("could not be resumed: event #"), result.detail
    assert "TaskGroup" not in result.detail
    [notice] = [e for e in sink.events if isinstance(e, Notice)]
    assert notice.message.startswith("This debate could not be resumed after a restart: event #")


async def test_a_debate_its_platform_outage_stopped_resumes_past_the_notice(tmp_path: Path) -> None:
    """The platform stayed down past the front end's limit: the debate stopped, resumable, saying so.
    Resumed, it goes on from there (before, the replay took that notice for the format's and refused:
    the debate ended failed, "could not be resumed")."""

    def down_for_good(rt: Runtime, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, TurnCompleted) and event.turn_id == "t2":
            handle.platform_down("Discord is not answering")
            handle.platform_lost("Discord was unavailable for 600 s")

    first = await run_debate(tmp_path, options={"rounds": 2, "exchanges_per_round": 1}, hook=down_for_good)
    assert first.result.reason == "interrupted"
    sink = RecordingSink()
    [handle], [result] = await resume(make_config(tmp_path), sink)
    assert handle.debate_id == first.debate_id and result.reason == "max_rounds", result.detail
    events, record = await events_of(make_config(tmp_path), first.debate_id)
    assert record is not None and record.status == "completed"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    codes = [e.code for e in events if isinstance(e, Notice)]
    assert codes.count("platform_unavailable") == 1 and "debate_failed" not in codes
