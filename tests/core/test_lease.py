"""One owner per debate: the lease, the fence on every write, refusals, and version-1 files."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.config import Secrets
from bot.runtime import Runtime
from core.errors import LeaseLost, StoreError
from core.events import Notice, TurnCompleted
from core.ports import DebateRecord, EventSink
from core.prepare import LeasedElsewhere
from core.spec import DebateSpec
from core.storage import sql
from core.storage.sqlite import SQLiteStore
from tests.bot.test_kill_and_resume import ARGS, check, env_for, rostra
from tests.core.test_store import record
from tests.helpers import REPO, RecordingSink, make_config


def note(debate_id: str, seq: int) -> Notice:
    return Notice(debate_id=debate_id, seq=seq, level="info", code="x", message=f"#{seq}")


async def test_a_store_that_does_not_hold_the_lease_cannot_write_the_debate(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    a = await SQLiteStore.open(path)
    b = await SQLiteStore.open(path)  # a second process on the same file
    try:
        await a.create_debate(record("d"))
        await a.append(note("d", 1))
        await a.record_call("d", "ada|proposition|turn", 0, '"A said this"')
        assert not await b.acquire("d")
        with pytest.raises(LeaseLost):
            await b.append(note("d", 2))
        with pytest.raises(LeaseLost):
            await b.record_call("d", "ada|proposition|turn", 0, '"B says otherwise"')
        with pytest.raises(LeaseLost):
            await b.record_call("d", "ada|proposition|turn", 1, '"B adds"')
        with pytest.raises(LeaseLost):
            await b.set_status("d", "failed", "B gave up")
        got = await a.get_debate("d")
        assert got is not None and got.status == "running" and got.owner == a.owner
        assert await a.calls("d") == {("ada|proposition|turn", 0): '"A said this"'}
        await a.append(note("d", 2))  # the owner goes on undisturbed
        # a record, once written, is never overwritten (not even by its owner)
        await a.record_call("d", "ada|proposition|turn", 0, '"rewritten"')
        assert await a.calls("d") == {("ada|proposition|turn", 0): '"A said this"'}
    finally:
        await a.close()
    try:
        assert await b.acquire("d")  # A closed: its leases are void at once
        await b.append(note("d", 3))
        assert [e.seq for e in await b.events("d")] == [1, 2, 3]
    finally:
        await b.close()


async def test_a_lease_runs_out_unless_renewed(tmp_path: Path) -> None:
    """An owner on another machine cannot be asked whether it lives: its lease decides."""
    path = tmp_path / "r.db"
    store = await SQLiteStore.open(path)
    try:
        await store.create_debate(record("d"))
        elsewhere = "otherhost:4242:abcd"
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("UPDATE debates SET owner = ?, lease_until = ?", (elsewhere, time.time() + 60))
        assert not await store.acquire("d")
        with pytest.raises(LeaseLost, match="otherhost"):
            await store.append(note("d", 1))
        with conn:
            conn.execute("UPDATE debates SET lease_until = ?", (time.time() - 1,))
        conn.close()
        assert await store.acquire("d")
        await store.append(note("d", 1))
    finally:
        await store.close()


async def test_a_heartbeat_keeps_the_lease_and_a_taken_lease_is_noticed(tmp_path: Path) -> None:
    settings = make_config(tmp_path, storage={"lease_seconds": 1.0, "heartbeat_seconds": 0.1}).storage
    path = tmp_path / "r.db"
    store = await SQLiteStore.open(path, settings)
    try:
        await store.create_debate(record("d"))
        first = await store.get_debate("d")
        assert first is not None
        for _ in range(50):
            now = await store.get_debate("d")
            assert now is not None
            if now.lease_until > first.lease_until:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the lease was never renewed")
    finally:
        await store.close()
    closed = sqlite3.connect(path).execute("SELECT owner, lease_until FROM debates").fetchone()
    assert closed == ("", 0)  # a clean close gives the lease up


V1_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE debates (
    id TEXT PRIMARY KEY, format TEXT NOT NULL, topic TEXT NOT NULL, spec TEXT NOT NULL,
    status TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '', platform TEXT NOT NULL DEFAULT '',
    scope TEXT NOT NULL DEFAULT '', channel TEXT NOT NULL DEFAULT '', started_by TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX debates_by_status ON debates (status, created_at);
CREATE TABLE events (
    debate_id TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE, seq INTEGER NOT NULL,
    kind TEXT NOT NULL, at TEXT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (debate_id, seq)
) WITHOUT ROWID;
CREATE TABLE model_calls (
    debate_id TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE, key TEXT NOT NULL,
    n INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (debate_id, key, n)
) WITHOUT ROWID;
CREATE TABLE bindings (
    debate_id TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE, key TEXT NOT NULL,
    value TEXT NOT NULL, PRIMARY KEY (debate_id, key)
) WITHOUT ROWID;
INSERT INTO schema_version VALUES (1);
"""


COLUMNS_V1 = (
    "id, format, topic, spec, status, reason, platform, scope, channel, started_by, created_at, updated_at"
)


def downgrade_to_v1(db: Path) -> None:
    """Rewrite the file as version 1 wrote it: the same rows, no lease columns."""
    old = db.with_name("old.db")
    src = sqlite3.connect(db)
    dst = sqlite3.connect(old)
    dst.executescript(V1_SCHEMA)
    dst.executemany(
        f"INSERT INTO debates ({COLUMNS_V1}) VALUES ({','.join('?' * 12)})",
        src.execute(f"SELECT {COLUMNS_V1} FROM debates").fetchall(),
    )
    for table in ("events", "model_calls", "bindings"):
        rows = src.execute(f"SELECT * FROM {table}").fetchall()
        if rows:
            dst.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)
    dst.commit()
    src.close()
    dst.close()
    old.replace(db)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


async def test_a_version_1_file_is_upgraded_and_its_debate_resumes(tmp_path: Path) -> None:
    """A debate interrupted under the previous Rostra (schema 1) resumes to its end after the upgrade."""
    config = make_config(tmp_path)
    spec = DebateSpec("arena", "Tabs?", {"rounds": 1, "exchanges_per_round": 1, "humans": "off"})
    spoke = asyncio.Event()
    sink = RecordingSink()
    sink.hooks.append(lambda e: spoke.set() if isinstance(e, TurnCompleted) else None)
    async with Runtime(config, secrets=Secrets()) as rt:
        handle = await rt.start_debate(spec, sink, seed=3)
        await spoke.wait()
        debate_id = handle.debate_id  # leaving the runtime interrupts it
    downgrade_to_v1(tmp_path / "rostra.db")

    later = RecordingSink()

    async def reattach(rec: DebateRecord, values: dict[str, str]) -> EventSink | None:
        return later

    async with Runtime(config, secrets=Secrets()) as rt:
        [resumed] = await rt.resume_debates("terminal", reattach)
        result = await resumed.wait()
        assert resumed.debate_id == debate_id and result.reason == "max_rounds"
    conn = sqlite3.connect(tmp_path / "rostra.db")
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(sql.SCHEMA_VERSION,)]
    assert conn.execute("SELECT status, owner FROM debates").fetchone() == ("completed", "")
    conn.close()


async def test_a_running_debate_is_not_resumed_by_a_second_runtime(tmp_path: Path) -> None:
    """Two runtimes (as two processes) on one file: the second neither resumes nor closes it."""
    config = make_config(tmp_path, model={"latency": 0.5})
    spec = DebateSpec("arena", "Tabs?", {"rounds": 1, "exchanges_per_round": 1, "humans": "off"})
    async with Runtime(config, secrets=Secrets()) as first, Runtime(config, secrets=Secrets()) as second:
        handle = await first.start_debate(spec, RecordingSink(), seed=2)
        record_ = await second.store.get_debate(handle.debate_id)
        assert record_ is not None
        with pytest.raises(LeasedElsewhere, match="running in another Rostra process"):
            await second.manager.resume(record_, RecordingSink())

        async def attach(rec: DebateRecord, values: dict[str, str]) -> EventSink | None:
            raise AssertionError("a debate leased by a live process was offered for reattaching")

        assert await second.resume_debates("terminal", attach) == []
        assert not handle.done  # still running in the first
        await handle.stop()
        await handle.wait()


@pytest.mark.slow
def test_resume_of_a_debate_running_elsewhere_is_refused_in_one_line(tmp_path: Path) -> None:
    """Two `rostra resume ID` at once: exactly one runs it, the other says so in one line. Killed,
    the winner leaves model calls that agree with the events, and a later resume completes."""
    db = tmp_path / "rostra.db"
    log = tmp_path / "stderr.log"
    first = rostra(db, log, "demo", *ARGS)
    debate_id: str | None = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                debate_id, _, events = check(db) if db.exists() else (None, None, [])
            except sqlite3.OperationalError:  # the file is there, its tables not yet
                debate_id, events = None, []
            if debate_id and any(isinstance(e, TurnCompleted) for e in events):
                break
            time.sleep(0.2)
    finally:
        first.kill()
        first.wait()
    assert debate_id is not None

    racers = [
        subprocess.Popen(
            [sys.executable, "-m", "bot", "resume", debate_id],
            cwd=REPO,
            env=env_for(db),
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    deadline = time.monotonic() + 60
    while all(r.poll() is None for r in racers) and time.monotonic() < deadline:
        time.sleep(0.1)  # until the loser has answered
    time.sleep(1)
    codes = [r.poll() for r in racers]
    assert codes.count(None) == 1, f"exactly one runs it: {codes}"
    loser = next(r for r in racers if r.poll() is not None)
    winner = next(r for r in racers if r.poll() is None)
    assert loser.returncode == 2
    _, err = loser.communicate()
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "is running in another Rostra process" in lines[0], err
    winner.kill()
    winner.communicate()

    done = subprocess.run(
        [sys.executable, "-m", "bot", "resume", debate_id, "--fast"],
        cwd=REPO,
        env=env_for(db),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    _, status, events = check(db)
    assert status == "completed"
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    assert len({t.turn_id for t in turns}) == len(turns)
    calls_agree_with_events(db, debate_id, turns)


def calls_agree_with_events(db: Path, debate_id: str, turns: list[TurnCompleted]) -> None:
    """Each speaker's n-th stored turn is the n-th answer stored for that speaker's model."""
    conn = sqlite3.connect(db)
    query = "SELECT key, n, payload FROM model_calls WHERE debate_id = ?"
    rows = conn.execute(query, (debate_id,)).fetchall()
    conn.close()
    answers: dict[str, dict[int, str]] = {}
    for key, n, payload in rows:
        data = json.loads(payload)
        if key.endswith("|turn") and data.get("ok"):
            answers.setdefault(key, {})[n] = data["text"]
    spoken: dict[str, list[str]] = {}
    for turn in turns:
        spoken.setdefault(f"{turn.speaker.id}|{turn.role}|turn", []).append(turn.text)
    checked = 0
    for key, texts in spoken.items():
        stored = answers.get(key, {})
        for n, text in enumerate(texts):
            if n in stored:
                assert stored[n].strip() == text.strip(), f"{key} #{n}"
                checked += 1
    assert checked >= len(turns) - 1  # the closing summary is asked under its own key


def test_a_read_only_database_gets_one_clear_line(tmp_path: Path) -> None:
    """SQLite opens a file read-only when its header's write version is above 2 (whoever runs it,
    root included, unlike file permissions): every write is refused, as on a read-only mount."""
    db = tmp_path / "rostra.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with db.open("r+b") as f:
        f.seek(18)
        f.write(bytes([3]))
    out = subprocess.run(
        [sys.executable, "-m", "bot", "debates"],
        cwd=REPO,
        env=env_for(db),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode != 0
    assert len(lines) == 1 and lines[0].startswith("rostra: Cannot use the database"), out.stderr
    assert "readonly" in lines[0]


def test_a_database_that_cannot_be_created_gets_one_clear_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = subprocess.run(
        [sys.executable, "-m", "bot", "debates"],
        cwd=REPO,
        env=env_for(blocker / "sub" / "rostra.db"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode != 0
    assert len(lines) == 1 and lines[0].startswith("rostra: Cannot create the folder"), out.stderr


def test_store_error_is_a_debate_error() -> None:
    assert issubclass(LeaseLost, StoreError)
