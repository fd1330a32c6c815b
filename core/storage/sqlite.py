"""The SQLite store: a debates table and an append-only event log, in WAL mode.

Writes go through one writer task and one connection on one dedicated thread. The task takes the
queued writes and runs the whole batch on the thread in one call: one `BEGIN IMMEDIATE` transaction,
each write inside its own SAVEPOINT (none for a write whose one change is its last statement, such
as an append: one INSERT that checks the lease and the seq itself), then COMMIT; each caller is
resolved only after that COMMIT succeeded. A write that another write's failure undoes is never
reported as done, and one write's refusal (a seq gap, a lost lease) does not undo the others. A
batch is whatever is queued when the writer wakes (group commit); a policy for larger batches only
changes `_next_batch`.
Reads use a second connection (aiosqlite), which in WAL mode sees committed data only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from core.errors import LeaseLost, StoreError, StoreUnavailable
from core.events import Event, dump_event, load_event
from core.ports import Binding, DebateRecord, DebateStatus, new_owner_id, owner_alive, retire_owner_id
from core.settings import StorageSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

SCHEMA_VERSION = 2
MAX_BATCH = 256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS debates (
    id          TEXT PRIMARY KEY,
    format      TEXT NOT NULL,
    topic       TEXT NOT NULL,
    spec        TEXT NOT NULL,
    status      TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    platform    TEXT NOT NULL DEFAULT '',
    scope       TEXT NOT NULL DEFAULT '',
    channel     TEXT NOT NULL DEFAULT '',
    started_by  TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    owner       TEXT NOT NULL DEFAULT '',
    lease_until REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS debates_by_status ON debates (status, created_at);
CREATE TABLE IF NOT EXISTS events (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    at          TEXT NOT NULL,
    payload     TEXT NOT NULL,
    PRIMARY KEY (debate_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS model_calls (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    n           INTEGER NOT NULL,
    payload     TEXT NOT NULL,
    PRIMARY KEY (debate_id, key, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bindings (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (debate_id, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS votes_inbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    payload     TEXT NOT NULL
);
"""

_MIGRATE_1_TO_2 = """
ALTER TABLE debates ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE debates ADD COLUMN lease_until REAL NOT NULL DEFAULT 0;
"""

# SQLite's messages for faults that pass (a lock, a full disk, an I/O hiccup, a read-only file)
_TRANSIENT = (
    "locked",
    "busy",
    "disk is full",
    "disk i/o error",
    "readonly database",
    "unable to open database",
)


def sqlite_path(url: str) -> Path:
    """`sqlite:///relative/or/absolute/path.db` → a path (with `~` expanded)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        raise StoreError(
            f"Unsupported storage URL {url!r}: use sqlite:///path/to/rostra.db or postgresql://…"
        )
    raw = url[len(prefix) :]
    if not raw:
        raise StoreError("The storage URL has no file path: use sqlite:///path/to/rostra.db")
    return Path(raw).expanduser()


def _now() -> str:
    return datetime.now(UTC).isoformat()


def store_fault(exc: BaseException) -> StoreError:
    """A sqlite3 error as the store's own: StoreUnavailable when retrying may help."""
    if isinstance(exc, StoreError):
        return exc
    text = str(exc) or type(exc).__name__
    if isinstance(exc, sqlite3.OperationalError) and any(t in text.lower() for t in _TRANSIENT):
        return StoreUnavailable(f"the database is unavailable: {text}")
    if isinstance(exc, ValueError) and "closed" in text.lower():
        return StoreUnavailable("the database connection is closed")
    return StoreError(f"the database refused a write: {text}")


# An append in one statement: stored only if the debate is ours (or released) and its seq follows
# the last stored one. Most appends are just this; one it refuses is looked at again to say why.
_CHECKED_INSERT = """
INSERT INTO events (debate_id, seq, kind, at, payload)
SELECT ?, ?, ?, ?, ?
WHERE (SELECT owner FROM debates WHERE id = ?) IN ('', ?)
  AND (SELECT COALESCE(MAX(seq), 0) FROM events WHERE debate_id = ?) = ? - 1
"""

Op = Callable[[sqlite3.Connection], Any]  # runs on the writer thread, inside the batch's transaction


@dataclass
class _Write:
    op: Op | None
    # False for an op whose only change is its last statement: SQLite undoes a failed statement by
    # itself, and checks that raise before it changed nothing, so it needs no SAVEPOINT of its own
    savepoint: bool = True
    future: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class SQLiteStore:
    """One SQLite file; every write committed before it returns, fenced by the debate's lease."""

    def __init__(
        self,
        writer: sqlite3.Connection,
        thread: ThreadPoolExecutor,
        reader: aiosqlite.Connection,
        path: Path,
        settings: StorageSettings,
    ) -> None:
        self._conn = writer
        self._thread = thread
        self._reader = reader
        self.path = path
        self.settings = settings
        self._owner = new_owner_id()
        self._held: set[str] = set()
        # what the open transaction already checked, per debate (writer thread only; see _commit_on_thread)
        self._fenced: set[str] = set()
        self._last_seq: dict[str, int] = {}
        self._queue: asyncio.Queue[_Write] = asyncio.Queue()
        self._closed = False
        self._writer_task = asyncio.create_task(self._write_loop(), name="sqlite-writer")
        self._heartbeat_task = asyncio.create_task(self._heartbeat_loop(), name="sqlite-lease-heartbeat")

    @classmethod
    async def open(cls, path: Path, settings: StorageSettings | None = None) -> SQLiteStore:
        settings = settings or StorageSettings()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"Cannot create the folder for the database {path}: {exc.strerror}") from None
        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rostra-sqlite-writer")
        loop = asyncio.get_running_loop()
        writer: sqlite3.Connection | None = None
        reader: aiosqlite.Connection | None = None
        try:
            writer = await loop.run_in_executor(thread, _connect_writer, path, settings)
            reader = await aiosqlite.connect(path, isolation_level=None)
            reader.row_factory = aiosqlite.Row
            await reader.execute(f"PRAGMA busy_timeout={int(settings.busy_timeout * 1000)}")
        except BaseException as exc:
            if writer is not None:
                await loop.run_in_executor(thread, writer.close)
            if reader is not None:
                await reader.close()
            thread.shutdown(wait=False)
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"Cannot use the database {path}: {exc}") from None
            raise
        return cls(writer, thread, reader, path, settings)

    @property
    def owner(self) -> str:
        return self._owner

    async def close(self) -> None:
        """Finish the queued writes, give every lease up, stop."""
        if self._closed:
            return
        self._heartbeat_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._heartbeat_task
        if self._held:
            try:
                await self._write(self._release_all)
            except StoreError as exc:
                log.warning("could not give the debate leases up (they run out): %s", exc)
        self._closed = True
        self._queue.put_nowait(_Write(None))  # the writer stops here
        await asyncio.wait([self._writer_task])
        retire_owner_id(self._owner)
        await asyncio.get_running_loop().run_in_executor(self._thread, self._conn.close)
        self._thread.shutdown(wait=False)
        await self._reader.close()

    # --- the writer ------------------------------------------------------------------------------

    async def _write(self, op: Op, *, savepoint: bool = True) -> Any:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        w = _Write(op, savepoint)
        self._queue.put_nowait(w)
        return await w.future

    async def _write_loop(self) -> None:
        while True:
            batch = await self._next_batch()
            stop = any(w.op is None for w in batch)
            batch = [w for w in batch if w.op is not None]
            try:
                await self._commit(batch)
            except Exception as exc:  # never leave a caller waiting
                for w in batch:
                    if not w.future.done():
                        w.future.set_exception(store_fault(exc))
            if stop:
                return

    async def _next_batch(self) -> list[_Write]:
        batch = [await self._queue.get()]
        while len(batch) < MAX_BATCH and not self._queue.empty() and batch[-1].op is not None:
            batch.append(self._queue.get_nowait())
        return batch

    async def _commit(self, batch: list[_Write]) -> None:
        """One transaction for the batch, on the writer thread; callers hear only after COMMIT."""
        pending = [w for w in batch if not w.future.cancelled()]
        if not pending:
            return
        ops = [(w.op, w.savepoint) for w in pending if w.op is not None]
        loop = asyncio.get_running_loop()
        outcomes = await loop.run_in_executor(self._thread, self._commit_on_thread, ops)
        for w, (ok, value) in zip(pending, outcomes, strict=True):
            if w.future.done():
                continue
            if ok:
                w.future.set_result(value)
            else:
                w.future.set_exception(value)

    def _commit_on_thread(self, ops: list[tuple[Op, bool]]) -> list[tuple[bool, Any]]:
        """The batch as one transaction. `BEGIN IMMEDIATE` holds the file's write lock until COMMIT,
        so no other process writes meanwhile: a debate's lease and last seq, once read, hold for the
        whole batch (`_fenced`, `_last_seq`), which saves two reads per write after a debate's first."""
        conn = self._conn
        self._fenced.clear()
        self._last_seq.clear()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except Exception as exc:
            fault = store_fault(exc)
            return [(False, fault) for _ in ops]
        outcomes: list[tuple[bool, Any]] = []
        try:
            for op, savepoint in ops:
                if savepoint:
                    conn.execute("SAVEPOINT one_write")
                try:
                    value = op(conn)
                except (StoreError, sqlite3.Error) as exc:
                    if not conn.in_transaction:
                        raise  # SQLite rolled the whole transaction back (a full disk, an I/O error)
                    if savepoint:
                        conn.execute("ROLLBACK TO one_write")
                        conn.execute("RELEASE one_write")
                    outcomes.append((False, store_fault(exc)))
                    continue
                if savepoint:
                    conn.execute("RELEASE one_write")
                outcomes.append((True, value))
            self._end_transaction(conn)
        except Exception as exc:
            if conn.in_transaction:
                with contextlib.suppress(Exception):
                    conn.execute("ROLLBACK")
            fault = store_fault(exc)
            done = len(outcomes)
            return [(False, fault) if ok else (False, value) for ok, value in outcomes] + [
                (False, fault) for _ in ops[done:]
            ]
        return outcomes

    def _end_transaction(self, conn: sqlite3.Connection) -> None:
        conn.execute("COMMIT")

    async def on_writer(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run `fn` with the writer's connection on its thread, between batches (maintenance, tests)."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, self._conn)

    def _fence(self, conn: sqlite3.Connection, debate_id: str) -> None:
        if debate_id in self._fenced:
            return  # checked in this transaction; our own writes only ever leave it ours or ''
        row = conn.execute("SELECT owner FROM debates WHERE id = ?", (debate_id,)).fetchone()
        if row is None:
            raise StoreError(f"no debate {debate_id}")
        if row["owner"] not in ("", self._owner):  # released (the debate ended) or ours: writable
            self._held.discard(debate_id)
            raise LeaseLost(f"debate {debate_id} is owned by another process ({row['owner']})")
        self._fenced.add(debate_id)

    # --- leases ----------------------------------------------------------------------------------

    async def acquire(self, debate_id: str) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            row = conn.execute("SELECT owner, lease_until FROM debates WHERE id = ?", (debate_id,)).fetchone()
            if row is None:
                return False
            owner, until = row["owner"], float(row["lease_until"])
            now = time.time()
            if owner not in ("", self._owner) and until > now and owner_alive(owner):
                return False
            conn.execute(
                "UPDATE debates SET owner = ?, lease_until = ? WHERE id = ? AND owner = ?",
                (self._owner, now + self.settings.lease_seconds, debate_id, owner),
            )
            return True

        taken = bool(await self._write(op))
        if taken:
            self._held.add(debate_id)
        return taken

    async def release(self, debate_id: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE debates SET owner = '', lease_until = 0 WHERE id = ? AND owner = ?",
                (debate_id, self._owner),
            )

        self._held.discard(debate_id)
        await self._write(op)

    def _release_all(self, conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE debates SET owner = '', lease_until = 0 WHERE owner = ?", (self._owner,))
        self._held.clear()

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_seconds)
            if not self._held:
                continue
            try:
                await self._write(self._renew)
            except StoreError as exc:
                log.warning("could not renew debate leases: %s", exc)

    def _renew(self, conn: sqlite3.Connection) -> None:
        held = sorted(self._held)
        marks = ",".join("?" * len(held))
        conn.execute(
            f"UPDATE debates SET lease_until = ? WHERE owner = ? AND id IN ({marks})",
            (time.time() + self.settings.lease_seconds, self._owner, *held),
        )
        rows = conn.execute(f"SELECT id, owner FROM debates WHERE id IN ({marks})", held).fetchall()
        owners = {r["id"]: r["owner"] for r in rows}
        for debate_id in held:
            owner = owners.get(debate_id, "")
            if owner == self._owner:
                continue
            self._held.discard(debate_id)
            if owner:  # unowned means given up by this process's own write (an end, a release)
                log.warning("debate %s: its lease was taken by another process", debate_id)

    # --- writes ----------------------------------------------------------------------------------

    async def create_debate(self, record: DebateRecord) -> None:
        b = record.binding

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO debates (id, format, topic, spec, status, reason, platform, scope, channel,"
                " started_by, created_at, updated_at, owner, lease_until)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    record.id,
                    record.format,
                    record.topic,
                    json.dumps(record.spec),
                    record.status,
                    record.reason,
                    b.platform,
                    b.scope,
                    b.channel,
                    b.started_by,
                    record.created_at.isoformat(),
                    record.updated_at.isoformat(),
                    self._owner,
                    time.time() + self.settings.lease_seconds,
                ),
            )

        await self._write(op)
        self._held.add(record.id)

    def _append_op(self, event: Event) -> Op:
        def op(conn: sqlite3.Connection) -> None:
            row = (event.debate_id, event.seq, event.kind, event.at.isoformat(), text)
            checks = (event.debate_id, self._owner, event.debate_id, event.seq)
            if conn.execute(_CHECKED_INSERT, (*row, *checks)).rowcount:
                self._fenced.add(event.debate_id)
                self._last_seq[event.debate_id] = event.seq
                return
            # refused: find out why (or find it stored already, by a retry whose answer was lost)
            self._fence(conn, event.debate_id)
            last = self._last_seq.get(event.debate_id)
            if last is None:
                row = conn.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM events WHERE debate_id = ?", (event.debate_id,)
                ).fetchone()
                last = int(row[0]) if row is not None else 0
            if event.seq <= last:
                stored = conn.execute(
                    "SELECT payload FROM events WHERE debate_id = ? AND seq = ?", (event.debate_id, event.seq)
                ).fetchone()
                if stored is not None and stored["payload"] == text:
                    return  # a retry of a write that was stored after all: it is, once
            if event.seq != last + 1:
                raise StoreError(f"event seq {event.seq} for debate {event.debate_id} does not follow {last}")
            conn.execute(
                "INSERT INTO events (debate_id, seq, kind, at, payload) VALUES (?,?,?,?,?)",
                (event.debate_id, event.seq, event.kind, event.at.isoformat(), text),
            )
            self._last_seq[event.debate_id] = event.seq  # only once the INSERT went through

        text = dump_event(event)
        return op

    async def append(self, event: Event) -> None:
        await self._write(self._append_op(event), savepoint=False)

    async def set_status(self, debate_id: str, status: DebateStatus, reason: str = "") -> None:
        """Fenced; a debate that is no longer running gives its lease up with the same write."""

        def op(conn: sqlite3.Connection) -> None:
            self._fence(conn, debate_id)
            if status == "running":
                conn.execute(
                    "UPDATE debates SET status = ?, reason = ?, updated_at = ? WHERE id = ?",
                    (status, reason, _now(), debate_id),
                )
            else:
                conn.execute(
                    "UPDATE debates SET status = ?, reason = ?, updated_at = ?, owner = '', lease_until = 0"
                    " WHERE id = ?",
                    (status, reason, _now(), debate_id),
                )

        await self._write(op)
        if status != "running":
            self._held.discard(debate_id)

    async def set_binding_value(self, debate_id: str, key: str, value: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            self._fence(conn, debate_id)
            conn.execute(
                "INSERT INTO bindings (debate_id, key, value) VALUES (?,?,?)"
                " ON CONFLICT (debate_id, key) DO UPDATE SET value = excluded.value",
                (debate_id, key, value),
            )

        await self._write(op, savepoint=False)  # one change: its last statement

    async def record_call(self, debate_id: str, key: str, n: int, payload: str) -> None:
        """Fenced, and never overwrites: the first record of a call is the one a replay gets."""

        def op(conn: sqlite3.Connection) -> None:
            self._fence(conn, debate_id)
            conn.execute(
                "INSERT INTO model_calls (debate_id, key, n, payload) VALUES (?,?,?,?)"
                " ON CONFLICT (debate_id, key, n) DO NOTHING",
                (debate_id, key, n, payload),
            )

        await self._write(op, savepoint=False)  # one change: its last statement

    async def post_vote(self, debate_id: str, payload: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO votes_inbox (debate_id, payload) VALUES (?, ?)", (debate_id, payload))

        await self._write(op)

    async def take_votes(self, debate_id: str) -> list[str]:
        def op(conn: sqlite3.Connection) -> list[str]:
            self._fence(conn, debate_id)
            rows = conn.execute(
                "SELECT id, payload FROM votes_inbox WHERE debate_id = ? ORDER BY id", (debate_id,)
            ).fetchall()
            if rows:
                conn.execute(
                    "DELETE FROM votes_inbox WHERE debate_id = ? AND id <= ?", (debate_id, rows[-1]["id"])
                )
            return [r["payload"] for r in rows]

        result: list[str] = await self._write(op)
        return result

    async def wait_for_votes(self) -> None:
        """SQLite has no notifications: the owner polls (storage.poll_seconds)."""
        await asyncio.sleep(self.settings.poll_seconds)

    # --- reads -----------------------------------------------------------------------------------

    async def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        try:
            async with self._reader.execute(sql, params) as cur:
                return list(await cur.fetchall())
        except sqlite3.Error as exc:
            raise store_fault(exc) from None

    async def events(self, debate_id: str) -> list[Event]:
        rows = await self._read("SELECT payload FROM events WHERE debate_id = ? ORDER BY seq", (debate_id,))
        return [load_event(r["payload"]) for r in rows]

    async def get_debate(self, debate_id: str) -> DebateRecord | None:
        rows = await self._read("SELECT * FROM debates WHERE id = ?", (debate_id,))
        return _record(rows[0]) if rows else None

    async def list_debates(self, limit: int = 20) -> Sequence[DebateRecord]:
        rows = await self._read("SELECT * FROM debates ORDER BY created_at DESC, id LIMIT ?", (limit,))
        return [_record(r) for r in rows]

    async def debates_with_status(self, status: DebateStatus) -> Sequence[DebateRecord]:
        rows = await self._read("SELECT * FROM debates WHERE status = ? ORDER BY created_at", (status,))
        return [_record(r) for r in rows]

    async def calls(self, debate_id: str) -> dict[tuple[str, int], str]:
        rows = await self._read("SELECT key, n, payload FROM model_calls WHERE debate_id = ?", (debate_id,))
        return {(r["key"], int(r["n"])): r["payload"] for r in rows}

    async def binding_values(self, debate_id: str) -> dict[str, str]:
        rows = await self._read("SELECT key, value FROM bindings WHERE debate_id = ?", (debate_id,))
        return {r["key"]: r["value"] for r in rows}


def _connect_writer(path: Path, settings: StorageSettings) -> sqlite3.Connection:
    """The writer's connection, set up and migrated (on the writer thread)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={int(settings.busy_timeout * 1000)}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _migrate(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Create the schema, or bring a version-1 file up to date (in one transaction)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        existing = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        version: int | None = None
        if existing is not None:
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            version = int(row["version"]) if row is not None else None
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(f"{path} has schema version {version}; this Rostra expects {SCHEMA_VERSION}")
        if version == 1:
            for statement in _MIGRATE_1_TO_2.strip().split(";"):
                if statement.strip():
                    conn.execute(statement)
            log.info("%s: schema upgraded from version 1 to %d", path, SCHEMA_VERSION)
        for statement in _SCHEMA.strip().split(";"):
            if statement.strip():
                conn.execute(statement)
        if version is None:
            conn.execute("DELETE FROM schema_version")
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        elif version != SCHEMA_VERSION:
            conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")
        raise


def _record(row: Any) -> DebateRecord:
    return DebateRecord(
        id=row["id"],
        format=row["format"],
        topic=row["topic"],
        spec=json.loads(row["spec"]),
        status=row["status"],
        reason=row["reason"],
        binding=Binding(
            platform=row["platform"],
            scope=row["scope"],
            channel=row["channel"],
            started_by=row["started_by"],
        ),
        created_at=datetime.fromisoformat(row["created_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
        owner=row["owner"],
        lease_until=float(row["lease_until"]),
    )


async def open_store(url: str, settings: StorageSettings | None = None) -> SQLiteStore:
    return await SQLiteStore.open(sqlite_path(url), settings)
