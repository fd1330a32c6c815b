"""The Postgres store (asyncpg): the same tables as SQLite, for many Rostra processes on one database.

Every write is one transaction on a pooled connection. A write to a debate first locks the debate's
row (`SELECT … FOR UPDATE`), which fences it by the lease and orders it against every other write to
that debate, in any process; writes to different debates run side by side. The caller hears only
after COMMIT. Human votes cast in a process that does not own the debate are stored and announced
with NOTIFY; the owner LISTENs and takes them at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import asyncpg

from core.errors import LeaseLost, StoreError, StoreUnavailable
from core.events import Event, dump_event, load_event
from core.ports import DebateRecord, DebateStatus, new_owner_id, owner_alive, retire_owner_id
from core.settings import StorageSettings
from core.storage import sql

log = logging.getLogger(__name__)

T = TypeVar("T")

SQL = sql.POSTGRES
VOTES_CHANNEL = "rostra_votes"
_MIGRATION_LOCK = 7_303_372  # an advisory lock id: one process creates the schema at a time

_TRANSIENT: tuple[type[BaseException], ...] = (
    OSError,
    asyncpg.exceptions.InternalClientError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.InsufficientResourcesError,  # disk full, out of memory, too many connections
    asyncpg.exceptions.LockNotAvailableError,
    asyncpg.exceptions.DeadlockDetectedError,
    asyncpg.exceptions.SerializationError,
    asyncpg.exceptions.OperatorInterventionError,  # admin shutdown, cannot connect now, query cancelled
    asyncpg.exceptions.ReadOnlySQLTransactionError,  # a standby, during a failover
    asyncpg.exceptions.PostgresSystemError,  # I/O error
    TimeoutError,
)


_CONNECTION_LOST = (
    asyncpg.exceptions.InternalClientError,  # a connection the server dropped mid-operation
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.InterfaceError,
    ConnectionError,
)


_ASYNCPG_ERRORS = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    OSError,
    TimeoutError,
)


def store_fault(exc: BaseException) -> StoreError:
    """An asyncpg error as the store's own: StoreUnavailable when retrying may help."""
    return sql.fault(exc, transient=isinstance(exc, _TRANSIENT))


def _server_settings(settings: StorageSettings) -> dict[str, str]:
    return {"lock_timeout": str(int(settings.busy_timeout * 1000)), "application_name": "rostra"}


class PostgresStore:
    """A Postgres database shared by any number of Rostra processes."""

    def __init__(self, pool: asyncpg.Pool, url: str, settings: StorageSettings) -> None:
        self._pool = pool
        self._url = url
        self.settings = settings
        self._owner = new_owner_id()
        self._held: set[str] = set()
        self._closed = False
        self._votes = asyncio.Event()
        self._listener: asyncpg.Connection | None = None
        self._heartbeat_task = asyncio.create_task(self._heartbeat_loop(), name="postgres-lease-heartbeat")

    @classmethod
    async def open(cls, url: str, settings: StorageSettings | None = None) -> PostgresStore:
        settings = settings or StorageSettings(url=url)
        try:
            pool = await asyncpg.create_pool(
                url, min_size=1, max_size=10, server_settings=_server_settings(settings), timeout=10
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
            raise StoreError(f"Cannot open the Postgres database {_safe(url)}: {exc}") from None
        try:
            async with pool.acquire() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
                for statement in SQL.schema:
                    await conn.execute(statement)
                version = await conn.fetchval("SELECT version FROM schema_version")
                if version is None:
                    await conn.execute("INSERT INTO schema_version (version) VALUES ($1)", sql.SCHEMA_VERSION)
                elif version != sql.SCHEMA_VERSION:
                    raise StoreError(
                        f"{_safe(url)} has schema version {version}; this Rostra expects {sql.SCHEMA_VERSION}"
                    )
        except BaseException as exc:
            await pool.close()
            if isinstance(exc, asyncpg.PostgresError | OSError):
                raise StoreError(f"Cannot use the Postgres database {_safe(url)}: {exc}") from None
            raise
        return cls(pool, url, settings)

    @property
    def owner(self) -> str:
        return self._owner

    async def close(self) -> None:
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
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close()
        retire_owner_id(self._owner)
        await self._pool.close()

    # --- transactions ----------------------------------------------------------------------------

    async def _write(self, op: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                return await op(conn)
        except (StoreError, *_ASYNCPG_ERRORS) as exc:
            if isinstance(exc, _CONNECTION_LOST):
                await self._pool.expire_connections()  # the next write (a retry) starts on a fresh one
            raise store_fault(exc) from None

    async def _fence(self, conn: asyncpg.Connection, debate_id: str) -> None:
        owner = await conn.fetchval(SQL.fence, debate_id)
        if owner is None:
            raise StoreError(f"no debate {debate_id}")
        if owner not in ("", self._owner):  # released (the debate ended) or ours: writable
            self._held.discard(debate_id)
            raise LeaseLost(f"debate {debate_id} is owned by another process ({owner})")

    async def _read(self, sql: str, *args: Any) -> list[Any]:
        """A query; once more on a fresh connection when the pooled one turns out dead."""
        if self._closed:
            raise StoreUnavailable("the store is closed")
        for attempt in (1, 2):
            try:
                async with self._pool.acquire() as conn:
                    return list(await conn.fetch(sql, *args))
            except _CONNECTION_LOST:
                await self._pool.expire_connections()  # the server dropped them all, likely: start afresh
                if attempt == 2:
                    raise StoreUnavailable("the database connection was lost") from None
            except _ASYNCPG_ERRORS as exc:
                raise store_fault(exc) from None
        raise AssertionError("unreachable")

    # --- leases ----------------------------------------------------------------------------------

    async def acquire(self, debate_id: str) -> bool:
        async def op(conn: asyncpg.Connection) -> bool:
            row = await conn.fetchrow(SQL.lease_of, debate_id)
            if row is None:
                return False
            owner, until = row["owner"], float(row["lease_until"])
            now = time.time()
            if owner not in ("", self._owner) and until > now and owner_alive(owner):
                return False
            await conn.execute(
                SQL.take_lease, self._owner, now + self.settings.lease_seconds, debate_id, owner
            )
            return True

        taken = await self._write(op)
        if taken:
            self._held.add(debate_id)
        return taken

    async def release(self, debate_id: str) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            await conn.execute(SQL.release, debate_id, self._owner)

        self._held.discard(debate_id)
        await self._write(op)

    async def _release_all(self, conn: asyncpg.Connection) -> None:
        await conn.execute(SQL.release_all, self._owner)
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

    async def _renew(self, conn: asyncpg.Connection) -> None:
        held = sorted(self._held)
        rows = await conn.fetch(SQL.renew, time.time() + self.settings.lease_seconds, self._owner, held)
        still = {r["id"] for r in rows}
        gone = sorted(set(held) - still)
        if not gone:
            return
        now = await conn.fetch(SQL.owners_of, gone)
        owners = {r["id"]: r["owner"] for r in now}
        for debate_id in gone:
            self._held.discard(debate_id)
            if owners.get(debate_id):  # unowned means given up by this process's own write (an end)
                log.warning("debate %s: its lease was taken by another process", debate_id)

    # --- writes ----------------------------------------------------------------------------------

    async def create_debate(self, record: DebateRecord) -> None:
        row = sql.debate_row(record, self._owner, time.time() + self.settings.lease_seconds)

        async def op(conn: asyncpg.Connection) -> None:
            await conn.execute(SQL.insert_debate, *row)

        await self._write(op)
        self._held.add(record.id)

    async def append(self, event: Event) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            await self._fence(conn, event.debate_id)
            last = int(await conn.fetchval(SQL.last_seq, event.debate_id))
            if event.seq <= last:
                stored = await conn.fetchval(SQL.stored_payload, event.debate_id, event.seq)
                if stored == text:
                    return  # a retry of a write whose COMMIT landed but whose answer was lost
            if event.seq != last + 1:
                raise StoreError(f"event seq {event.seq} for debate {event.debate_id} does not follow {last}")
            await conn.execute(SQL.insert_event, *row)

        text = dump_event(event)
        row = (event.debate_id, event.seq, event.kind, event.at.isoformat(), text)
        await self._write(op)

    async def set_status(self, debate_id: str, status: DebateStatus, reason: str = "") -> None:
        """Fenced; a debate that is no longer running gives its lease up with the same write."""

        async def op(conn: asyncpg.Connection) -> None:
            await self._fence(conn, debate_id)
            statement = SQL.set_running if status == "running" else SQL.set_ended
            await conn.execute(statement, status, reason, sql.now_text(), debate_id)

        await self._write(op)
        if status != "running":
            self._held.discard(debate_id)

    async def set_binding_value(self, debate_id: str, key: str, value: str) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            await self._fence(conn, debate_id)
            await conn.execute(SQL.upsert_binding, debate_id, key, value)

        await self._write(op)

    async def record_call(self, debate_id: str, key: str, n: int, payload: str) -> None:
        """Fenced, and never overwrites: the first record of a call is the one a replay gets."""

        async def op(conn: asyncpg.Connection) -> None:
            await self._fence(conn, debate_id)
            await conn.execute(SQL.insert_call, debate_id, key, n, payload)

        await self._write(op)

    # --- votes from other processes --------------------------------------------------------------

    async def post_vote(self, debate_id: str, payload: str) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            await conn.execute(SQL.insert_vote, debate_id, payload)
            await conn.execute("SELECT pg_notify($1, $2)", VOTES_CHANNEL, debate_id)

        await self._write(op)

    async def take_votes(self, debate_id: str) -> list[str]:
        async def op(conn: asyncpg.Connection) -> list[str]:
            await self._fence(conn, debate_id)
            rows = await conn.fetch(SQL.take_votes, debate_id)
            return [r["payload"] for r in sorted(rows, key=lambda r: r["id"])]

        return await self._write(op)

    async def wait_for_votes(self) -> None:
        """Until a NOTIFY arrives (or a poll interval passes, should the listener be down)."""
        if self._listener is None or self._listener.is_closed():
            await self._listen()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._votes.wait(), timeout=self.settings.poll_seconds * 5)
        self._votes.clear()

    async def _listen(self) -> None:
        try:
            self._listener = await asyncpg.connect(
                self._url, server_settings=_server_settings(self.settings), timeout=10
            )
            await self._listener.add_listener(VOTES_CHANNEL, self._notified)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
            log.warning("cannot listen for votes (polling instead): %s", exc)
            self._listener = None

    def _notified(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        self._votes.set()

    # --- reads -----------------------------------------------------------------------------------

    async def events(self, debate_id: str) -> list[Event]:
        return [load_event(r["payload"]) for r in await self._read(SQL.events, debate_id)]

    async def get_debate(self, debate_id: str) -> DebateRecord | None:
        rows = await self._read(SQL.debate, debate_id)
        return sql.record_of(rows[0]) if rows else None

    async def list_debates(self, limit: int = 20) -> Sequence[DebateRecord]:
        return [sql.record_of(r) for r in await self._read(SQL.list_debates, limit)]

    async def debates_with_status(self, status: DebateStatus) -> Sequence[DebateRecord]:
        return [sql.record_of(r) for r in await self._read(SQL.with_status, status)]

    async def calls(self, debate_id: str) -> dict[tuple[str, int], str]:
        rows = await self._read(SQL.calls, debate_id)
        return {(r["key"], int(r["n"])): r["payload"] for r in rows}

    async def binding_values(self, debate_id: str) -> dict[str, str]:
        return {r["key"]: r["value"] for r in await self._read(SQL.binding_values, debate_id)}


def _safe(url: str) -> str:
    """The URL without its password (it must never reach a log or a message)."""
    head, sep, tail = url.partition("@")
    if not sep:
        return url
    scheme, _, creds = head.partition("://")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}@{tail}"
