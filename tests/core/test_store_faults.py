"""Store faults, injected as real SQLite errors: nothing is shown that is not kept, and debates survive.

Two real faults on a real file: another connection holding the database's exclusive lock (SQLite
answers "database is locked") and a full disk (`PRAGMA max_page_count` pinned to the file's size,
so SQLite answers SQLITE_FULL "database or disk is full", exactly as on a full file system).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.config import Config, Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.errors import StoreError, StoreUnavailable
from core.events import Event, Notice, TurnCompleted, TurnDelta, TurnStarted
from core.ports import DebateRecord, EventSink
from core.session import DebateHandle
from core.spec import DebateSpec
from core.storage.sqlite import SQLiteStore
from tests.core.test_store import record
from tests.helpers import RecordingSink, make_config

TOPIC = "Should cities ban cars?"
OPTIONS = {"rounds": 2, "exchanges_per_round": 2, "first_speaker": "ada", "humans": "off"}
FAST_RETRIES = {"busy_timeout": 0.1, "retry_initial": 0.05, "retry_max": 0.2}


def hold_lock(path: Path, seconds: float, held: threading.Event) -> None:
    """Another process's long write: the exclusive lock held for `seconds`."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        held.set()
        time.sleep(seconds)
        conn.execute("COMMIT")
    finally:
        conn.close()


async def disk_full(store: SQLiteStore, full: bool) -> None:
    """Pin the file's size (every write needing a new page fails with SQLITE_FULL), or unpin it."""

    def pin(conn: sqlite3.Connection) -> None:  # max_page_count is a per-connection limit
        if full:
            pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
            conn.execute(f"PRAGMA max_page_count = {pages}")
        else:
            conn.execute("PRAGMA max_page_count = 1073741823")

    await store.on_writer(pin)


def delivered_equals_stored(sink: RecordingSink, stored: list[Event]) -> None:
    """Every event a front end got is in the log, the same, and the log has no gap."""
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    by_seq = {e.seq: e for e in stored}
    for event in sink.events:
        assert by_seq.get(event.seq) == event, f"delivered #{event.seq} {event.kind} is not in the log"


# --- the store itself -------------------------------------------------------------------------------


async def test_appends_under_a_full_disk_are_stored_exactly_when_they_say_so(tmp_path: Path) -> None:
    """Eight debates append at once while the disk fills and empties: an append that returned is in
    the log, one that raised is not (and is retried with the same seq), and no log is ever refused
    its next write."""
    store = await SQLiteStore.open(tmp_path / "r.db")
    ids = [f"d{i}" for i in range(8)]
    for debate_id in ids:
        await store.create_debate(record(debate_id))
    acknowledged: dict[str, list[int]] = {d: [] for d in ids}
    faults = 0

    async def debate(debate_id: str) -> None:
        nonlocal faults
        seq = 1
        while seq <= 40:
            event = Notice(debate_id=debate_id, seq=seq, level="info", code="x", message="words " * 300)
            try:
                await store.append(event)
            except StoreUnavailable:
                faults += 1
                await asyncio.sleep(0.01)
                continue  # the same seq again: a refused write left nothing behind
            acknowledged[debate_id].append(seq)
            seq += 1

    async def weather(debates: asyncio.Future[Any]) -> None:
        while not debates.done():  # full, then a little room, then full again, until all are done
            await asyncio.sleep(0.01)
            await disk_full(store, False)
            await asyncio.sleep(0.002)
            await disk_full(store, True)
        await disk_full(store, False)

    try:
        await disk_full(store, True)
        debates = asyncio.gather(*(debate(d) for d in ids))
        await asyncio.gather(weather(debates), debates)
        for debate_id in ids:
            stored = [e.seq for e in await store.events(debate_id)]
            assert stored == acknowledged[debate_id] == list(range(1, 41))
    finally:
        await store.close()
    assert faults > 0, "the disk never filled: the test proved nothing"


class FailingCommits:
    """Every `every`-th COMMIT of the writer fails as SQLite's does on a full disk: the transaction
    is rolled back and SQLITE_FULL is raised (a real ROLLBACK, SQLite's own error type)."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.count = 0
        self.failed = 0
        self.on = True

    def __call__(self, conn: sqlite3.Connection) -> None:
        if self.on:
            self.count += 1
            if self.count % self.every == 0:
                conn.execute("ROLLBACK")
                self.failed += 1
                raise sqlite3.OperationalError("database or disk is full")
        conn.execute("COMMIT")


async def test_a_commit_that_fails_undoes_no_one_elses_acknowledged_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported fault: one COMMIT fails and SQLite rolls its transaction back. Eight debates
    append at once; an append that returned is in the log, and every debate's next write follows."""
    store = await SQLiteStore.open(tmp_path / "r.db")
    ids = [f"d{i}" for i in range(8)]
    for debate_id in ids:
        await store.create_debate(record(debate_id))
    faults = FailingCommits(every=3)
    monkeypatch.setattr(store, "_end_transaction", faults)
    acknowledged: dict[str, list[int]] = {d: [] for d in ids}

    async def debate(debate_id: str) -> None:
        seq = 1
        while seq <= 30:
            try:
                await store.append(Notice(debate_id=debate_id, seq=seq, level="info", code="x", message="hi"))
            except StoreUnavailable:
                await asyncio.sleep(0)
                continue
            acknowledged[debate_id].append(seq)
            seq += 1

    try:
        await asyncio.gather(*(debate(d) for d in ids))
        faults.on = False
        for debate_id in ids:
            assert [e.seq for e in await store.events(debate_id)] == acknowledged[debate_id]
            assert acknowledged[debate_id] == list(range(1, 31))
    finally:
        faults.on = False
        await store.close()
    assert faults.failed > 5


async def test_a_held_lock_fails_every_write_cleanly_and_the_next_one_follows(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = await SQLiteStore.open(path, make_config(tmp_path, storage=FAST_RETRIES).storage)
    two = Notice(debate_id="a", seq=2, level="info", code="x", message="two")
    try:
        await store.create_debate(record("a"))
        await store.append(Notice(debate_id="a", seq=1, level="info", code="x", message="one"))
        held = threading.Event()
        locker = asyncio.ensure_future(asyncio.to_thread(hold_lock, path, 0.5, held))
        await asyncio.to_thread(held.wait)
        with pytest.raises(StoreUnavailable, match="locked"):
            await store.append(two)
        with pytest.raises(StoreUnavailable, match="locked"):
            await store.record_call("a", "ada|proposition|turn", 0, '{"ok": true}')
        await locker
        assert [e.seq for e in await store.events("a")] == [1]
        assert await store.calls("a") == {}
        await store.append(two)  # the refused write left nothing behind: the same seq follows
        await store.record_call("a", "ada|proposition|turn", 0, '{"ok": true}')
        assert [e.seq for e in await store.events("a")] == [1, 2]
        assert await store.calls("a") == {("ada|proposition|turn", 0): '{"ok": true}'}
    finally:
        await store.close()


# --- debates through the runtime ----------------------------------------------------------------------


def fault_config(tmp_path: Path, **storage: Any) -> Config:
    return make_config(tmp_path, model={"latency": 0.5}, storage={**FAST_RETRIES, **storage})


async def start_debates(
    rt: Runtime, count: int, fault_at: Callable[[Event], Any]
) -> tuple[list[DebateHandle], dict[str, RecordingSink]]:
    handles: list[DebateHandle] = []
    sinks: dict[str, RecordingSink] = {}
    for i in range(count):
        sink = RecordingSink()
        if i == 0:
            sink.hooks.append(fault_at)
        handle = await rt.start_debate(DebateSpec("arena", TOPIC, OPTIONS), sink, seed=4 + i)
        handles.append(handle)
        sinks[handle.debate_id] = sink
    return handles, sinks


async def test_a_lock_held_for_a_while_pauses_every_debate_and_each_goes_on(tmp_path: Path) -> None:
    config = fault_config(tmp_path, outage_limit=30)
    path = tmp_path / "rostra.db"
    faults: list[asyncio.Future[None]] = []

    def fault_at(event: Event) -> None:
        if event.seq == 8 and not faults:
            faults.append(asyncio.ensure_future(asyncio.to_thread(hold_lock, path, 1.5, threading.Event())))

    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handles, sinks = await start_debates(rt, 3, fault_at)
        results = [await h.wait() for h in handles]
        await faults[0]
        for handle, result in zip(handles, results, strict=True):
            assert result.reason == "max_rounds"
            sink = sinks[handle.debate_id]
            stored = await rt.store.events(handle.debate_id)
            delivered_equals_stored(sink, stored)
            assert [e.seq for e in sink.events] == [e.seq for e in stored]  # all of it, once
            assert len(sink.of(TurnCompleted)) == 2 * 2 * 2 + 1  # two rounds of two exchanges, a summary
            record_ = await rt.store.get_debate(handle.debate_id)
            assert record_ is not None and record_.status == "completed"
            calls = await rt.store.calls(handle.debate_id)  # none lost while the lock was held
            spoken = [k for k in calls if k[0].endswith(("|turn", "|summary"))]
            assert len(spoken) == len(sink.of(TurnCompleted)), sorted(calls)
            assert all(json.loads(p)["ok"] for p in calls.values())
        paused = [n for s in sinks.values() for n in s.of(Notice) if n.code == "store_paused"]
        assert paused, "no thread said the debate paused"
        assert all("database was unavailable" in n.message for n in paused)


async def test_a_full_disk_past_the_limit_interrupts_and_the_debates_come_back(tmp_path: Path) -> None:
    """The disk stays full past `storage.outage_limit`: every debate stops, resumable, showing
    nothing it did not keep; once space is back they are picked up again and finish, and each
    thread says what happened."""
    config = fault_config(tmp_path, outage_limit=0.5, lease_seconds=1.0, heartbeat_seconds=0.2)
    cleared = asyncio.Event()

    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        store = rt.store
        assert isinstance(store, SQLiteStore)

        async def fill(event: Event) -> None:
            if event.seq == 8 and not cleared.is_set() and not getattr(fill, "done", False):
                fill.done = True  # type: ignore[attr-defined]
                await disk_full(store, True)

        handles, sinks = await start_debates(rt, 3, fill)
        results = [await h.wait() for h in handles]
        assert {r.reason for r in results} == {"interrupted"}
        assert all("database was unavailable" in r.detail for r in results)
        for handle in handles:
            delivered_equals_stored(sinks[handle.debate_id], await store.events(handle.debate_id))

        await disk_full(store, False)
        cleared.set()

        async def reattach(rec: DebateRecord, values: dict[str, str]) -> EventSink | None:
            return sinks[rec.id]

        rt.enable_failover()
        await rt.resume_debates("terminal", reattach)
        for _ in range(300):
            statuses = [(await store.get_debate(h.debate_id)) for h in handles]
            if all(r is not None and r.status == "completed" for r in statuses):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"not every debate came back: {[r and r.status for r in statuses]}")
        for handle in handles:
            sink = sinks[handle.debate_id]
            stored = await store.events(handle.debate_id)
            delivered_equals_stored(sink, stored)
            assert [e.seq for e in sink.events] == [e.seq for e in stored]
            assert len([e for e in stored if isinstance(e, TurnCompleted)]) == 2 * 2 * 2 + 1
            said = [n.message for n in sink.of(Notice)]
            assert any("database was unavailable" in m for m in said), said


@pytest.mark.parametrize("fault", ["unavailable", "refused"])
async def test_a_store_fault_mid_stream_is_not_taken_for_a_model_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """The store stops taking events while a turn streams (for good, or it refuses them): the turn
    is not asked for again and no failure is remembered against the model. An outage leaves the
    debate resumable; a refusal fails it with the store's reason."""
    config = fault_config(tmp_path, outage_limit=0.3)
    real_append = SQLiteStore.append
    broken: list[bool] = []

    async def append(self: SQLiteStore, event: Event) -> None:
        if broken or (isinstance(event, TurnDelta) and event.turn_id == "t2"):
            broken.append(True)
            if fault == "unavailable":
                raise StoreUnavailable("the database is unavailable: database or disk is full")
            raise StoreError("the database refused a write: CHECK constraint failed")
        await real_append(self, event)

    monkeypatch.setattr(SQLiteStore, "append", append)
    sink = RecordingSink()
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(DebateSpec("arena", TOPIC, OPTIONS), sink, seed=4)
        result = await handle.wait()
        calls = await rt.store.calls(handle.debate_id)
    if fault == "unavailable":
        assert result.reason == "interrupted" and "database was unavailable" in result.detail
    else:
        assert result.reason == "failed" and "refused a write" in result.detail
    assert all(json.loads(payload)["ok"] for payload in calls.values()), calls
    started = [e for e in sink.events if isinstance(e, TurnStarted) and e.turn_id == "t2"]
    assert [e.attempt for e in started] == [1]  # never "attempt 2" on a store fault


async def test_a_debate_that_paused_on_the_store_resumes_past_its_notice(tmp_path: Path) -> None:
    """The session's own notices (a pause, a takeover) are in the log but no format emits them:
    replaying after a restart steps over them instead of calling it a different debate."""
    config = fault_config(tmp_path, outage_limit=30)
    path = tmp_path / "rostra.db"
    locks: list[asyncio.Future[None]] = []
    paused = asyncio.Event()

    def fault_at(event: Event) -> None:
        if event.seq == 8 and not locks:
            locks.append(asyncio.ensure_future(asyncio.to_thread(hold_lock, path, 0.5, threading.Event())))
        if isinstance(event, Notice) and event.code == "store_paused":
            paused.set()

    sink = RecordingSink()
    sink.hooks.append(fault_at)
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(DebateSpec("arena", TOPIC, OPTIONS), sink, seed=4)
        await paused.wait()
        await locks[0]
        debate_id = handle.debate_id  # leaving the runtime cuts the debate short after the notice

    later = RecordingSink()

    async def reattach(rec: DebateRecord, values: dict[str, str]) -> EventSink | None:
        return later

    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        [resumed] = await rt.resume_debates("terminal", reattach)
        result = await resumed.wait()
        stored = await rt.store.events(debate_id)
    assert result.reason == "max_rounds", result.detail
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert sum(1 for e in stored if isinstance(e, Notice) and e.code == "store_paused") == 1
    assert len([e for e in stored if isinstance(e, TurnCompleted)]) == 2 * 2 * 2 + 1


async def test_the_debate_clock_stands_still_while_the_store_is_away(tmp_path: Path) -> None:
    """Debate time is time people can follow: a store outage is counted as a pause, not as debate."""
    from core.clock import RealClock

    config = make_config(tmp_path, model={"latency": 0.01}, storage={**FAST_RETRIES, "outage_limit": 30})
    path = tmp_path / "rostra.db"
    locks: list[asyncio.Future[None]] = []

    def fault_at(event: Event) -> None:
        if event.seq == 6 and not locks:
            locks.append(asyncio.ensure_future(asyncio.to_thread(hold_lock, path, 1.5, threading.Event())))

    sink = RecordingSink()
    sink.hooks.append(fault_at)
    options = {**OPTIONS, "rounds": 1, "exchanges_per_round": 1}
    async with Runtime(config, clock=RealClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(DebateSpec("arena", TOPIC, options), sink, seed=4)
        result = await handle.wait()
        await locks[0]
    assert result.reason == "max_rounds"
    assert result.stats.paused_seconds >= 1.0  # the lock's 1.5 s, less the moment before it was hit
    assert result.stats.debate_seconds < 1.0  # the debate itself took a fraction of a second
