"""A Postgres database for the store: the connection pool, its server-side limits, the schema, and
which asyncpg errors pass (StoreUnavailable) and which mean the connection is gone.

Every connection is bounded on the server: a transaction left idle (its process frozen, say, with
a debate row locked) is ended by the server after half a lease, and no lock is waited for longer
than `storage.busy_timeout`. So a frozen owner cannot hold a debate beyond its lease.
"""

from __future__ import annotations

import asyncpg

from core.errors import StoreError
from core.settings import StorageSettings
from core.storage import sql

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


async def open_pool(url: str, settings: StorageSettings) -> asyncpg.Pool:
    """The pool, with the schema created or brought up to date (one process at a time)."""
    try:
        pool = await asyncpg.create_pool(
            url, min_size=1, max_size=10, server_settings=server_settings(settings), timeout=10
        )
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
        raise StoreError(f"Cannot open the Postgres database {safe_url(url)}: {exc}") from None
    try:
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            for statement in sql.POSTGRES.schema:
                await conn.execute(statement)
            version = await conn.fetchval("SELECT version FROM schema_version")
            if version is None:
                await conn.execute("INSERT INTO schema_version (version) VALUES ($1)", sql.SCHEMA_VERSION)
            elif version == 2:
                await conn.execute(sql.POSTGRES.migrate_2_to_3)
                await conn.execute("UPDATE schema_version SET version = $1", sql.SCHEMA_VERSION)
            elif version != sql.SCHEMA_VERSION:
                raise StoreError(
                    f"{safe_url(url)} has schema version {version}; this Rostra expects {sql.SCHEMA_VERSION}"
                )
    except BaseException as exc:
        await pool.close()
        if isinstance(exc, asyncpg.PostgresError | OSError):
            raise StoreError(f"Cannot use the Postgres database {safe_url(url)}: {exc}") from None
        raise
    return pool


def safe_url(url: str) -> str:
    """The URL without its password (it must never reach a log or a message)."""
    head, sep, tail = url.partition("@")
    if not sep:
        return url
    scheme, _, creds = head.partition("://")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}@{tail}"
