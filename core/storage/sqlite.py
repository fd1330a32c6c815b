"""The SQLite store: a debates table and an append-only event log, in WAL mode.

Writes go through one writer task (group commit, core.storage.batching) and one connection on one
dedicated thread. Each batch runs on the thread in one call: one `BEGIN IMMEDIATE` transaction,
each write inside its own SAVEPOINT (none for a write whose one change is its last statement, such
as an append: one INSERT that checks the lease and the seq itself), then COMMIT; each caller is
resolved only after that COMMIT succeeded. One write's refusal (a seq gap, a lost lease) does not
undo the others. Reads use a second connection (aiosqlite), which in WAL mode sees committed data only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import aiosqlite

from core.errors import StoreError, StoreUnavailable
from core.events import Event, dump_event
from core.ports import (
    BindingValues,
    ChannelClaim,
    DebateRecord,
    DebateStatus,
    new_owner_id,
    retire_owner_id,
)
from core.private_files import private_folder, touch_private
from core.settings import StorageSettings
from core.storage import cluster, sql
from core.storage.batching import GroupCommit, Outcome
from core.storage.installations import KeepsInstallations
from core.storage.leases import HoldsLeases, Leases
from core.storage.sqlite_cluster import SQLiteCluster
from core.storage.sqlite_file import connect_writer, sqlite_path

__all__ = ["SQLiteStore", "open_store", "sqlite_path", "store_fault"]

log = logging.getLogger(__name__)

SQL = sql.SQLITE
CLUSTER = cluster.SQLITE

# SQLite's messages for faults that pass (a lock, a full disk, an I/O hiccup, a read-only file)
_TRANSIENT = (
    "locked",
    "busy",
    "disk is full",
    "disk i/o error",
    "readonly database",
    "unable to open database",
)

Op = Callable[[sqlite3.Connection], Any]  # runs on the writer thread, inside the batch's transaction
# an op and whether it needs a SAVEPOINT: not when its only change is its last statement (SQLite
# undoes a failed statement by itself, and checks that raise before it changed nothing)
Write = tuple[Op, bool]


def store_fault(exc: BaseException) -> StoreError:
    """A sqlite3 error as the store's own: StoreUnavailable when retrying may help."""
    text = str(exc).lower()
    if isinstance(exc, ValueError) and "closed" in text:
        return StoreUnavailable("the database connection is closed")
    transient = isinstance(exc, sqlite3.OperationalError) and any(t in text for t in _TRANSIENT)
    return sql.fault(exc, transient=transient)


class SQLiteStore(SQLiteCluster, KeepsInstallations, HoldsLeases):
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
        self._leases = Leases(self._owner, settings)
        # what the open transaction already checked, per debate (writer thread only; see _run_on_thread)
        self._fenced: set[str] = set()
        self._last_seq: dict[str, int] = {}
        self._closed = False
        self._claims: set[tuple[str, str]] = set()  # pending claims taken here, renewed by the heartbeat
        self._role: str | None = None  # the workers' role this process joined
        self._purging = False  # delivery keys were stored here: expired ones are purged on the beat
        self._writer: GroupCommit[Write] = GroupCommit(self._run_batch, store_fault, "sqlite-writer")
        heartbeat = self._leases.heartbeat(
            settings.heartbeat_seconds, lambda: self._write(self._renew), self._tending
        )
        self._heartbeat_task = asyncio.create_task(heartbeat, name="sqlite-lease-heartbeat")

    @classmethod
    async def open(cls, path: Path, settings: StorageSettings | None = None) -> SQLiteStore:
        settings = settings or StorageSettings()
        try:
            private_folder(path.parent)
            touch_private(path)
        except OSError as exc:
            raise StoreError(f"Cannot create the folder for the database {path}: {exc.strerror}") from None
        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rostra-sqlite-writer")
        loop = asyncio.get_running_loop()
        writer: sqlite3.Connection | None = None
        reader: aiosqlite.Connection | None = None
        try:
            writer = await loop.run_in_executor(thread, connect_writer, path, settings)
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
        if self._leases.held or self._tending():
            try:
                await self._write(self._release_all)
            except StoreError as exc:
                log.warning("could not give the debate leases up (they run out): %s", exc)
        self._closed = True
        await self._writer.close()
        retire_owner_id(self._owner)
        await asyncio.get_running_loop().run_in_executor(self._thread, self._conn.close)
        self._thread.shutdown(wait=False)
        await self._reader.close()

    # --- the writer ------------------------------------------------------------------------------

    async def _write(self, op: Op, *, savepoint: bool = True) -> Any:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        return await self._writer.submit((op, savepoint))

    async def _run_batch(self, ops: list[Write]) -> list[Outcome]:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._run_on_thread, ops)

    def _run_on_thread(self, ops: list[Write]) -> list[Outcome]:
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
        outcomes: list[Outcome] = []
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

    def _fence(self, conn: sqlite3.Connection, debate_id: str, *, unowned_ok: bool = False) -> None:
        """Raise LeaseLost unless this store holds the debate's current fencing token."""
        if debate_id in self._fenced:
            return  # checked in this transaction; our own writes only ever leave it ours or ''
        row = conn.execute(SQL.lease_row, (debate_id,)).fetchone()
        now = None if row is None else (str(row["owner"]), int(row["lease_token"]))
        self._leases.check(debate_id, now, unowned_ok=unowned_ok)
        if now is not None and self._leases.writable(debate_id, *now):
            self._fenced.add(debate_id)

    # --- leases ----------------------------------------------------------------------------------

    async def acquire(self, debate_id: str) -> bool:
        def op(conn: sqlite3.Connection) -> int | None:
            row = conn.execute(SQL.lease_of, (debate_id,)).fetchone()
            now = time.time()
            if row is None or not self._leases.takeable(row["owner"], float(row["lease_until"]), now):
                return None
            until = now + self.settings.lease_seconds
            params = (self._owner, until, debate_id, row["owner"], row["lease_token"])
            taken = conn.execute(SQL.take_lease, params).fetchone()
            return None if taken is None else int(taken[0])

        token = await self._write(op)
        if token is not None:
            self._leases.took(debate_id, token)
        return token is not None

    async def release(self, debate_id: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(SQL.release, (debate_id, self._owner))

        self._leases.gave_up(debate_id)
        await self._write(op)

    def _release_all(self, conn: sqlite3.Connection) -> None:
        conn.execute(SQL.release_all, (self._owner,))
        for debate_id in list(self._leases.held):
            self._leases.gave_up(debate_id)
        conn.execute(CLUSTER.drop_claims, (self._owner,))
        conn.execute(CLUSTER.worker_gone, (self._owner,))
        self._claims.clear()
        self._role = None

    def _tending(self) -> bool:
        return bool(self._claims) or self._role is not None or self._purging

    def _renew(self, conn: sqlite3.Connection) -> None:
        now = time.time()
        until = now + self.settings.lease_seconds
        if self._claims:
            conn.execute(CLUSTER.renew_claims, (until, self._owner))
        if self._role is not None:
            conn.execute(CLUSTER.worker_alive, (self._owner, self._role, until))
            conn.execute(CLUSTER.purge_workers, (now - cluster.WORKER_FORGOTTEN_AFTER,))
        if self._purging:
            conn.execute(CLUSTER.purge_deliveries, (now, cluster.PURGE_BATCH))
        held = sorted(self._leases.held)
        if not held:
            return
        ids = sql.sqlite_ids(held)
        since = self._leases.now()
        params = (time.time() + self.settings.lease_seconds, self._owner, ids)
        renewed = {r["id"] for r in conn.execute(SQL.renew, params).fetchall()}
        if rest := self._leases.renewed(held, renewed, since):
            rows = conn.execute(SQL.owners_of, (sql.sqlite_ids(rest),)).fetchall()
            self._leases.not_renewed(rest, {r["id"]: (r["owner"], int(r["lease_token"])) for r in rows})

    # --- writes ----------------------------------------------------------------------------------

    async def create_debate(
        self, record: DebateRecord, *, claim: ChannelClaim | None = None, values: BindingValues | None = None
    ) -> None:
        row = sql.debate_row(record, self._owner, time.time() + self.settings.lease_seconds)

        def op(conn: sqlite3.Connection) -> None:
            self._claimed_for(conn, claim, record.id)
            conn.execute(SQL.insert_debate, row)
            conn.executemany(SQL.upsert_binding, [(record.id, k, v) for k, v in (values or {}).items()])

        if claim is not None:  # not renewed from now on, even if this fails: it lapses
            self._claims.discard((claim.platform, claim.channel))

        await self._write(op)
        self._leases.took(record.id, 1)

    def _append_op(self, event: Event) -> Op:
        def op(conn: sqlite3.Connection) -> None:
            checks = (self._owner, self._leases.token(event.debate_id))
            if conn.execute(SQL.checked_insert, (*row, *checks)).rowcount:
                self._fenced.add(event.debate_id)
                self._last_seq[event.debate_id] = event.seq
                return
            # refused: find out why (or find it stored already, by a retry whose answer was lost)
            self._fence(conn, event.debate_id)
            last = self._last_seq.get(event.debate_id)
            if last is None:
                last = int(conn.execute(SQL.last_seq, (event.debate_id,)).fetchone()[0])
            if event.seq <= last:
                stored = conn.execute(SQL.stored_payload, (event.debate_id, event.seq)).fetchone()
                if stored is not None and stored["payload"] == text:
                    return  # a retry of a write that was stored after all: it is, once
            if event.seq != last + 1:
                raise StoreError(f"event seq {event.seq} for debate {event.debate_id} does not follow {last}")
            conn.execute(SQL.insert_event, row)
            self._last_seq[event.debate_id] = event.seq  # only once the INSERT went through

        text = dump_event(event)
        row = (event.debate_id, event.seq, event.kind, event.at.isoformat(), text)
        return op

    async def append(self, event: Event) -> None:
        await self._write(self._append_op(event), savepoint=False)

    async def set_status(self, debate_id: str, status: DebateStatus, reason: str = "") -> None:
        """Fenced; a debate that is no longer running gives its lease up with the same write."""

        def op(conn: sqlite3.Connection) -> None:
            self._fence(conn, debate_id)
            statement = SQL.set_running if status == "running" else SQL.set_ended
            conn.execute(statement, (status, reason, sql.now_text(), debate_id))

        await self._write(op)
        if status != "running":
            self._leases.gave_up(debate_id)

    async def set_binding_value(self, debate_id: str, key: str, value: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            self._fence(conn, debate_id, unowned_ok=True)
            conn.execute(SQL.upsert_binding, (debate_id, key, value))

        await self._write(op, savepoint=False)  # one change: its last statement

    async def record_call(self, debate_id: str, key: str, n: int, payload: str) -> None:
        """Fenced, and never overwrites: the first record of a call is the one a replay gets."""

        def op(conn: sqlite3.Connection) -> None:
            self._fence(conn, debate_id)
            conn.execute(SQL.insert_call, (debate_id, key, n, payload))

        await self._write(op, savepoint=False)  # one change: its last statement

    # --- reads -----------------------------------------------------------------------------------

    async def _read(self, statement: str, params: Sequence[Any]) -> list[Any]:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        try:
            async with self._reader.execute(statement, params) as cur:
                return list(await cur.fetchall())
        except sqlite3.Error as exc:
            raise store_fault(exc) from None

    async def events(self, debate_id: str) -> list[Event]:
        return sql.events_of(debate_id, [r["payload"] for r in await self._read(SQL.events, (debate_id,))])

    async def get_debate(self, debate_id: str) -> DebateRecord | None:
        rows = await self._read(SQL.debate, (debate_id,))
        return sql.record_of(rows[0]) if rows else None

    async def list_debates(self, limit: int = 20) -> Sequence[DebateRecord]:
        return sql.readable_records(await self._read(SQL.list_debates, (limit,)))

    async def debates_with_status(self, status: DebateStatus) -> Sequence[DebateRecord]:
        return sql.readable_records(await self._read(SQL.with_status, (status,)))

    async def calls(self, debate_id: str) -> dict[tuple[str, int], str]:
        rows = await self._read(SQL.calls, (debate_id,))
        return {(r["key"], int(r["n"])): r["payload"] for r in rows}

    async def binding_values(self, debate_id: str) -> dict[str, str]:
        return {r["key"]: r["value"] for r in await self._read(SQL.binding_values, (debate_id,))}

    async def running_values(self, key: str, where: tuple[str, str]) -> dict[str, int]:
        return {r["value"]: int(r["n"]) for r in await self._read(SQL.running_values, (key, *where))}


async def open_store(url: str, settings: StorageSettings | None = None) -> SQLiteStore:
    return await SQLiteStore.open(sqlite_path(url), settings)
