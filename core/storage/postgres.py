"""The Postgres store (asyncpg): the same tables as SQLite, for many Rostra processes on one database.

Writes go through one writer task (group commit, core.storage.batching): the writes queued while a
transaction runs go into the next one, on one pooled connection, and each caller hears only after
that COMMIT. Every write to a debate is fenced by the debate's lease token (core.storage.leases)
and locks the debate's row, which orders it against every other write to that debate in any
process. A write the database refuses aborts a Postgres transaction: it is rolled back and the
batch runs again without that write, so one write's failure never undoes the others. Taking a
lease runs alone, waiting for a row lock no longer than a heartbeat. Human votes cast in a process
that does not own the debate are stored and announced with NOTIFY; the owner LISTENs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import asyncpg

from core.errors import StoreError, StoreUnavailable
from core.events import Event, dump_event
from core.ports import BindingValues, ChannelClaim, DebateRecord, DebateStatus, new_owner_id, retire_owner_id
from core.settings import StorageSettings
from core.storage import cluster, sql
from core.storage.batching import GroupCommit, Outcome
from core.storage.installations import KeepsInstallations
from core.storage.leases import HoldsLeases, Leases
from core.storage.postgres_cluster import PostgresCluster
from core.storage.postgres_db import (
    ASYNCPG_ERRORS,
    CONNECTION_LOST,
    VoteNotices,
    fetch,
    milliseconds,
    open_pool,
    store_fault,
)

__all__ = ["PostgresStore", "store_fault"]

log = logging.getLogger(__name__)

T = TypeVar("T")
Op = Callable[[asyncpg.Connection], Awaitable[Any]]  # one write, inside the batch's transaction


@dataclass(frozen=True)
class _Write:
    op: Op
    # the write as one statement on its own (autocommit), tried when it is alone in its batch:
    # True when that stored it; else the op runs in a transaction as usual
    alone: Callable[[asyncpg.Connection], Awaitable[bool]] | None = None
    event: tuple[Any, ...] | None = None  # an append's row: stored with the batch's others at once


SQL = sql.POSTGRES
CLUSTER = cluster.POSTGRES


class PostgresStore(PostgresCluster, KeepsInstallations, HoldsLeases):
    """A Postgres database shared by any number of Rostra processes."""

    def __init__(self, pool: asyncpg.Pool, url: str, settings: StorageSettings) -> None:
        self._pool = pool
        self._url = url
        self.settings = settings
        self._owner = new_owner_id()
        self._leases = Leases(self._owner, settings)
        self._fenced: set[str] = set()  # debates whose row the open transaction holds, checked
        self._conn: asyncpg.Connection | None = None  # the writer's, kept between batches
        self._closed = False
        self._notices = VoteNotices(url, settings)
        self._claims: set[tuple[str, str]] = set()  # pending claims taken here, renewed by the heartbeat
        self._role: str | None = None  # the workers' role this process joined
        self._purging = False  # delivery keys were stored here: expired ones are purged on the beat
        self._writer: GroupCommit[_Write] = GroupCommit(self._run_batch, store_fault, "postgres-writer")
        heartbeat = self._leases.heartbeat(
            settings.heartbeat_seconds, lambda: self._write(self._renew), self._tending
        )
        self._heartbeat_task = asyncio.create_task(heartbeat, name="postgres-lease-heartbeat")

    @classmethod
    async def open(cls, url: str, settings: StorageSettings | None = None) -> PostgresStore:
        settings = settings or StorageSettings(url=url)
        return cls(await open_pool(url, settings), url, settings)

    @property
    def owner(self) -> str:
        return self._owner

    async def close(self) -> None:
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
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._pool.release(self._conn)
        await self._notices.close()
        retire_owner_id(self._owner)
        await self._pool.close()

    # --- transactions ----------------------------------------------------------------------------

    async def _write(self, op: Op) -> Any:
        return await self._submit(_Write(op))

    async def _submit(self, write: _Write) -> Any:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        return await self._writer.submit(write)

    async def _run_batch(self, writes: list[_Write]) -> list[Outcome]:
        try:
            if self._conn is None:
                self._conn = await self._pool.acquire()
            conn = self._conn
            alone = writes[0].alone if len(writes) == 1 else None
            if alone is not None and await alone(conn):
                return [(True, None)]
            return await self._transaction(conn, writes)
        except BaseException as exc:
            conn_gone = isinstance(exc, CONNECTION_LOST)
            if self._conn is not None and (conn_gone or self._conn.is_in_transaction()):
                await self._drop_connection()  # the next write (a retry) starts on a fresh one
            if not isinstance(exc, ASYNCPG_ERRORS):
                raise
            fault = store_fault(exc)
            return [(False, fault) for _ in writes]

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.terminate()
            with contextlib.suppress(Exception):
                await self._pool.release(conn)
        await self._pool.expire_connections()

    async def _transaction(self, conn: asyncpg.Connection, writes: list[_Write]) -> list[Outcome]:
        """The batch as one transaction; a write the database refused is left out and the rest rerun.

        The batch's appends go first, in one statement; the writes of one batch were all queued at
        once, so any order of them is one they could have had. An op raises StoreError (a lost
        lease, a seq gap) only before it changed anything, so the transaction goes on without it."""
        outcomes: dict[int, Outcome] = {}
        todo = list(range(len(writes)))
        together = True
        while todo:
            self._fenced.clear()
            await conn.execute("BEGIN")
            done: dict[int, Outcome] = {}
            refused: tuple[int, asyncpg.PostgresError] | None = None
            if together:
                try:
                    done = await self._append_together(conn, writes, todo)
                except asyncpg.PostgresError as exc:
                    if isinstance(exc, CONNECTION_LOST):
                        raise
                    await conn.execute("ROLLBACK")
                    together = False  # one by one: the one refused is found and left out
                    continue
            for i in todo:
                if i in done:
                    continue
                try:
                    done[i] = (True, await writes[i].op(conn))
                except StoreError as exc:
                    done[i] = (False, exc)
                except asyncpg.PostgresError as exc:
                    if isinstance(exc, CONNECTION_LOST):
                        raise
                    refused = (i, exc)
                    break
            if refused is None:
                await conn.execute("COMMIT")
                outcomes.update(done)
                break
            await conn.execute("ROLLBACK")
            outcomes[refused[0]] = (False, store_fault(refused[1]))
            todo.remove(refused[0])
        return [outcomes[i] for i in range(len(writes))]

    async def _append_together(
        self, conn: asyncpg.Connection, writes: list[_Write], todo: list[int]
    ) -> dict[int, Outcome]:
        """The first append of each debate in the batch, in one statement; those it stored."""
        first: dict[str, int] = {}
        for i in todo:
            event = writes[i].event
            if event is not None and event[0] not in first:
                first[event[0]] = i
        if len(first) < 2:
            return {}
        columns = [list(c) for c in zip(*(writes[i].event or () for i in first.values()), strict=True)]
        tokens = [self._leases.token(debate_id) for debate_id in first]
        stored = await conn.fetch(sql.POSTGRES_APPEND_MANY, *columns, tokens, self._owner)
        self._fenced.update(r["debate_id"] for r in stored)
        return {first[r["debate_id"]]: (True, None) for r in stored}

    async def _alone(self, op: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """One transaction outside the batches, on its own pooled connection."""
        if self._closed:
            raise StoreUnavailable("the store is closed")
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                return await op(conn)
        except (StoreError, *ASYNCPG_ERRORS) as exc:
            if isinstance(exc, CONNECTION_LOST):
                await self._pool.expire_connections()
            raise store_fault(exc) from None

    async def _fence(self, conn: asyncpg.Connection, debate_id: str, *, unowned_ok: bool = False) -> None:
        """Lock the debate's row, or raise LeaseLost unless this store holds its current token."""
        if debate_id in self._fenced:
            return  # locked and checked in this transaction; our own writes leave it ours or ''
        token = self._leases.token(debate_id)
        for _ in range(2):
            if await conn.fetchrow(SQL.fence, debate_id, self._owner, token) is not None:
                self._fenced.add(debate_id)
                return
            row = await conn.fetchrow(SQL.lease_row, debate_id)
            now = None if row is None else (str(row["owner"]), int(row["lease_token"]))
            self._leases.check(debate_id, now, unowned_ok=unowned_ok)
            if now is not None and not self._leases.writable(debate_id, *now):
                return  # unowned and never held by this store: no lock needed (see Leases.check)
        raise StoreUnavailable(f"debate {debate_id}: its lease changed while it was written")

    async def _read(self, statement: str, *args: Any) -> list[Any]:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        return await fetch(self._pool, statement, *args)

    # --- leases ----------------------------------------------------------------------------------

    async def acquire(self, debate_id: str) -> bool:
        """A takeover waits for the row's lock at most a heartbeat (a frozen owner's transaction is
        ended by the server within half a lease; the next try gets it)."""
        wait = min(self.settings.busy_timeout, self.settings.heartbeat_seconds)

        async def op(conn: asyncpg.Connection) -> int | None:
            await conn.execute(f"SET LOCAL lock_timeout = {milliseconds(wait)}")
            row = await conn.fetchrow(SQL.lease_of, debate_id)
            now = time.time()
            if row is None or not self._leases.takeable(row["owner"], float(row["lease_until"]), now):
                return None
            until = now + self.settings.lease_seconds
            token: int | None = await conn.fetchval(
                SQL.take_lease, self._owner, until, debate_id, row["owner"], row["lease_token"]
            )
            return token

        token = await self._alone(op)
        if token is not None:
            self._leases.took(debate_id, token)
        return token is not None

    async def release(self, debate_id: str) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            await conn.execute(SQL.release, debate_id, self._owner)

        self._leases.gave_up(debate_id)
        await self._write(op)

    async def _release_all(self, conn: asyncpg.Connection) -> None:
        await conn.execute(SQL.release_all, self._owner)
        for debate_id in list(self._leases.held):
            self._leases.gave_up(debate_id)
        await conn.execute(CLUSTER.drop_claims, self._owner)
        await conn.execute(CLUSTER.worker_gone, self._owner)
        self._claims.clear()
        self._role = None

    def _tending(self) -> bool:
        return bool(self._claims) or self._role is not None or self._purging

    async def _renew(self, conn: asyncpg.Connection) -> None:
        now = time.time()
        until_now = now + self.settings.lease_seconds
        if self._claims:
            await conn.execute(CLUSTER.renew_claims, until_now, self._owner)
        if self._role is not None:
            await conn.execute(CLUSTER.worker_alive, self._owner, self._role, until_now)
            await conn.execute(CLUSTER.purge_workers, now - cluster.WORKER_FORGOTTEN_AFTER)
        if self._purging:
            await conn.execute(CLUSTER.purge_deliveries, now, cluster.PURGE_BATCH)
        held = sorted(self._leases.held)
        if not held:
            return
        since, until = self._leases.now(), time.time() + self.settings.lease_seconds
        renewed = {r["id"] for r in await conn.fetch(SQL.renew, until, self._owner, held)}
        if rest := self._leases.renewed(held, renewed, since):
            rows = await conn.fetch(SQL.owners_of, rest)
            self._leases.not_renewed(rest, {r["id"]: (r["owner"], r["lease_token"]) for r in rows})

    # --- writes ----------------------------------------------------------------------------------

    async def create_debate(
        self, record: DebateRecord, *, claim: ChannelClaim | None = None, values: BindingValues | None = None
    ) -> None:
        row = sql.debate_row(record, self._owner, time.time() + self.settings.lease_seconds)

        async def op(conn: asyncpg.Connection) -> None:
            await self._claimed_for(conn, claim, record.id)
            await conn.execute(SQL.insert_debate, *row)
            await conn.executemany(SQL.upsert_binding, [(record.id, k, v) for k, v in (values or {}).items()])

        await (self._write(op) if claim is None else self._alone(op))
        self._leases.took(record.id, 1)

    async def append(self, event: Event) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            checks = (self._owner, self._leases.token(event.debate_id))
            if await conn.execute(SQL.checked_insert, *row, *checks) == "INSERT 0 1":
                self._fenced.add(event.debate_id)
                return
            # refused: find out why (or find it stored already, by a retry whose answer was lost)
            await self._fence(conn, event.debate_id)
            last = int(await conn.fetchval(SQL.last_seq, event.debate_id))
            if event.seq <= last:
                stored = await conn.fetchval(SQL.stored_payload, event.debate_id, event.seq)
                if stored == text:
                    return  # a retry of a write whose COMMIT landed but whose answer was lost
            if event.seq != last + 1:
                raise StoreError(f"event seq {event.seq} for debate {event.debate_id} does not follow {last}")
            await conn.execute(SQL.insert_event, *row)

        async def alone(conn: asyncpg.Connection) -> bool:
            checks = (self._owner, self._leases.token(event.debate_id))
            return bool(await conn.execute(SQL.checked_insert, *row, *checks) == "INSERT 0 1")

        text = dump_event(event)
        row = (event.debate_id, event.seq, event.kind, event.at.isoformat(), text)
        await self._submit(_Write(op, alone, row))

    async def set_status(self, debate_id: str, status: DebateStatus, reason: str = "") -> None:
        """Fenced; a debate that is no longer running gives its lease up with the same write."""

        async def op(conn: asyncpg.Connection) -> None:
            await self._fence(conn, debate_id)
            statement = SQL.set_running if status == "running" else SQL.set_ended
            await conn.execute(statement, status, reason, sql.now_text(), debate_id)

        await self._write(op)
        if status != "running":
            self._leases.gave_up(debate_id)

    async def set_binding_value(self, debate_id: str, key: str, value: str) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            await self._fence(conn, debate_id, unowned_ok=True)
            await conn.execute(SQL.upsert_binding, debate_id, key, value)

        await self._write(op)

    async def record_call(self, debate_id: str, key: str, n: int, payload: str) -> None:
        """Fenced, and never overwrites: the first record of a call is the one a replay gets."""

        async def op(conn: asyncpg.Connection) -> None:
            await self._fence(conn, debate_id)
            await conn.execute(SQL.insert_call, debate_id, key, n, payload)

        await self._write(op)

    # --- reads -----------------------------------------------------------------------------------

    async def events(self, debate_id: str) -> list[Event]:
        return sql.events_of(debate_id, [r["payload"] for r in await self._read(SQL.events, debate_id)])

    async def get_debate(self, debate_id: str) -> DebateRecord | None:
        rows = await self._read(SQL.debate, debate_id)
        return sql.record_of(rows[0]) if rows else None

    async def list_debates(self, limit: int = 20) -> Sequence[DebateRecord]:
        return sql.readable_records(await self._read(SQL.list_debates, limit))

    async def debates_with_status(self, status: DebateStatus) -> Sequence[DebateRecord]:
        return sql.readable_records(await self._read(SQL.with_status, status))

    async def calls(self, debate_id: str) -> dict[tuple[str, int], str]:
        rows = await self._read(SQL.calls, debate_id)
        return {(r["key"], int(r["n"])): r["payload"] for r in rows}

    async def binding_values(self, debate_id: str) -> dict[str, str]:
        return {r["key"]: r["value"] for r in await self._read(SQL.binding_values, debate_id)}

    async def running_values(self, key: str, where: tuple[str, str]) -> dict[str, int]:
        return {r["value"]: int(r["n"]) for r in await self._read(SQL.running_values, key, *where)}
