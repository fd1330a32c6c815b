"""A Postgres database for the store: the connection pool, its server-side limits, the schema, and
which asyncpg errors pass (StoreUnavailable) and which mean the connection is gone.

Every connection is bounded on the server: a transaction left idle (its process frozen, say, with
a debate row locked) is ended by the server after half a lease, and no lock is waited for longer
than `storage.busy_timeout`. So a frozen owner cannot hold a debate beyond its lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import asyncpg

from core.errors import StoreError, StoreUnavailable
from core.settings import StorageSettings
from core.storage import sql
from core.storage.installations import LEGACY_TABLES

log = logging.getLogger(__name__)

VOTES_CHANNEL = "rostra_votes"
_MIGRATION_LOCK = 7_303_372  # an advisory lock id: one process creates the schema at a time

TRANSIENT: tuple[type[BaseException], ...] = (
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
    asyncpg.exceptions.IdleInTransactionSessionTimeoutError,
    TimeoutError,
)

CONNECTION_LOST = (
    asyncpg.exceptions.InternalClientError,  # a connection the server dropped mid-operation
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.IdleInTransactionSessionTimeoutError,
    asyncpg.InterfaceError,
    ConnectionError,
)

ASYNCPG_ERRORS = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    OSError,
    TimeoutError,
)


def store_fault(exc: BaseException) -> StoreError:
    """An asyncpg error as the store's own: StoreUnavailable when retrying may help."""
    return sql.fault(exc, transient=isinstance(exc, TRANSIENT))


def milliseconds(seconds: float) -> str:
    return str(max(1, int(seconds * 1000)))  # 0 would mean "no limit" to the server


def server_settings(settings: StorageSettings) -> dict[str, str]:
    return {
        "lock_timeout": milliseconds(settings.busy_timeout),
        # a lease renewed at t is renewed again by t + heartbeat <= t + lease/2 unless the owner froze;
        # frozen inside a transaction, its locks go at most half a lease later: by the lease's end
        "idle_in_transaction_session_timeout": milliseconds(settings.lease_seconds / 2),
        "application_name": "rostra",
    }


async def _current(conn: asyncpg.Connection) -> bool:
    """The schema is already this Rostra's: nothing to create. (Its CREATE ... IF NOT EXISTS still
    lock the tables, which waits on, and can deadlock with, the writes of the processes running.)"""
    if await conn.fetchval("SELECT to_regclass('schema_version')") is None:
        return False
    return bool(await conn.fetchval("SELECT version FROM schema_version") == sql.SCHEMA_VERSION)


async def open_pool(url: str, settings: StorageSettings) -> asyncpg.Pool:
    """The pool, with the schema created or brought up to date (one process at a time)."""
    try:
        pool = await asyncpg.create_pool(
            url, min_size=1, max_size=10, server_settings=server_settings(settings), timeout=10
        )
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
        raise StoreError(f"Cannot open the Postgres database {safe_url(url)}: {exc}") from None
    try:
        async with pool.acquire() as conn:
            if await _current(conn):
                return pool
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            for statement in sql.POSTGRES.schema:
                await conn.execute(statement)
            version = await conn.fetchval("SELECT version FROM schema_version")
            if version is None:
                await conn.execute("INSERT INTO schema_version (version) VALUES ($1)", sql.SCHEMA_VERSION)
            elif version in (2, 3, 4):  # 3 and 4 lacked only tables, created above
                if version == 2:
                    await conn.execute(sql.POSTGRES.migrate_2_to_3)
                await conn.execute("UPDATE schema_version SET version = $1", sql.SCHEMA_VERSION)
            elif version != sql.SCHEMA_VERSION:
                raise StoreError(
                    f"{safe_url(url)} has schema version {version}; this Rostra expects {sql.SCHEMA_VERSION}"
                )
            for table, move in LEGACY_TABLES:
                if await conn.fetchval(f"SELECT to_regclass('{table}')") is not None:
                    await conn.execute(move)
                    await conn.execute(f"DROP TABLE {table}")
    except BaseException as exc:
        await pool.close()
        if isinstance(exc, asyncpg.PostgresError | OSError):
            raise StoreError(f"Cannot use the Postgres database {safe_url(url)}: {exc}") from None
        raise
    return pool


async def fetch(pool: asyncpg.Pool, statement: str, *args: Any) -> list[Any]:
    """A query; once more on a fresh connection when the pooled one turns out dead."""
    for attempt in (1, 2):
        try:
            async with pool.acquire() as conn:
                return list(await conn.fetch(statement, *args))
        except CONNECTION_LOST:
            await pool.expire_connections()  # the server dropped them all, likely: start afresh
            if attempt == 2:
                raise StoreUnavailable("the database connection was lost") from None
        except ASYNCPG_ERRORS as exc:
            raise store_fault(exc) from None
    raise AssertionError("unreachable")


def safe_url(url: str) -> str:
    """The URL without its password (it must never reach a log or a message)."""
    head, sep, tail = url.partition("@")
    if not sep:
        return url
    scheme, _, creds = head.partition("://")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}@{tail}"


class VoteNotices:
    """LISTEN on its own connection for the NOTIFY a vote cast in another process sends."""

    def __init__(self, url: str, settings: StorageSettings) -> None:
        self._url = url
        self._settings = settings
        self._posted = asyncio.Event()
        self._conn: asyncpg.Connection | None = None

    async def wait(self) -> None:
        """Until a NOTIFY arrives (or a poll interval passes, should the listener be down)."""
        if self._conn is None or self._conn.is_closed():
            await self._listen()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._posted.wait(), timeout=self._settings.poll_seconds * 5)
        self._posted.clear()

    async def _listen(self) -> None:
        try:
            self._conn = await asyncpg.connect(
                self._url, server_settings=server_settings(self._settings), timeout=10
            )
            await self._conn.add_listener(VOTES_CHANNEL, self._notified)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
            log.warning("cannot listen for votes (polling instead): %s", exc)
            self._conn = None

    def _notified(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        self._posted.set()

    async def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
