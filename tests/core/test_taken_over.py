"""A process that wakes after another took its debate over says "taken over" and stops: no crash,
no write, whatever the other process did meanwhile (even ran the debate to its end)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import DebateCompleted, Event, TurnCompleted
from core.ports import DebateRecord, EventSink
from core.session.run import TAKEN_OVER
from core.spec import DebateSpec
from tests.helpers import RecordingSink, make_config

TOPIC = "Should cities ban cars?"


async def test_a_process_that_wakes_after_a_takeover_says_taken_over(tmp_path: Path) -> None:
    config = make_config(tmp_path, storage={"lease_seconds": 600.0, "heartbeat_seconds": 300.0})
    asleep, wake = asyncio.Event(), asyncio.Event()
    first = RecordingSink()

    async def fall_asleep(event: Event) -> None:  # a process frozen mid-debate (a long GC, a suspended VM)
        if isinstance(event, TurnCompleted) and event.turn_id == "t2":
            asleep.set()
            await wake.wait()

    first.hooks.append(fall_asleep)
    spec = DebateSpec("arena", TOPIC, {"rounds": 2, "exchanges_per_round": 2, "humans": "off"})
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as a:
        handle = await a.start_debate(spec, first, seed=3)
        await asleep.wait()
        db = sqlite3.connect(tmp_path / "rostra.db")
        with db:  # its lease runs out while it sleeps
            db.execute("UPDATE debates SET lease_until = 0")
        db.close()
        second = RecordingSink()

        async def reattach(record: DebateRecord, bindings: dict[str, str]) -> EventSink:
            return second

        async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as b:
            [taken] = await b.recovery.resume_debates("terminal", reattach)
            done = await taken.wait()
        assert done.reason == "max_rounds" and second.of(DebateCompleted)
        wake.set()
        result = await asyncio.wait_for(handle.wait(), 30)
    assert result.reason == "interrupted" and result.detail == TAKEN_OVER
    assert not first.of(DebateCompleted)
    db = sqlite3.connect(tmp_path / "rostra.db")
    [(status,)] = db.execute("SELECT status FROM debates").fetchall()
    completed = db.execute("SELECT COUNT(*) FROM events WHERE kind = 'debate_completed'").fetchone()[0]
    db.close()
    assert status == "completed" and completed == 1  # the sleeper wrote nothing over it


async def test_the_next_start_stores_a_debate_its_gone_process_left_running_as_interrupted(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path)
    spec = DebateSpec("arena", TOPIC, {"rounds": 2, "humans": "off"})
    cut = asyncio.Event()
    sink = RecordingSink()
    sink.hooks.append(lambda e: cut.set() if isinstance(e, TurnCompleted) else None)
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        gone = await rt.start_debate(spec, sink, seed=1)
        await cut.wait()
        alive = await rt.start_debate(spec, RecordingSink(), seed=2)
        await asyncio.sleep(0)
    db = sqlite3.connect(tmp_path / "rostra.db")
    with db:  # one died with the store down (status never written, lease run out); one runs elsewhere
        db.execute(
            "UPDATE debates SET status = 'running', owner = 'gone', lease_until = 0 WHERE id = ?",
            (gone.debate_id,),
        )
        db.execute(
            "UPDATE debates SET status = 'running', owner = 'alive', lease_until = ? WHERE id = ?",
            (time.time() + 600, alive.debate_id),
        )
    db.close()
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        assert await rt.recovery.settle_abandoned("terminal") == [gone.debate_id]
        settled, running = (
            await rt.store.get_debate(gone.debate_id),
            await rt.store.get_debate(alive.debate_id),
        )
    assert settled is not None and settled.status == "interrupted" and "stopped before" in settled.reason
    assert settled.owner == ""  # free to resume
    assert running is not None and running.status == "running" and running.owner == "alive"
