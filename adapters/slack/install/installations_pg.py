"""Each Slack workspace's installation and the OAuth `state`s in flight, on Postgres (asyncpg).

The same stores as on SQLite (`adapters.slack.install.installations`), run on a Postgres pool, for
a Rostra whose store is Postgres (`storage.url: postgresql://…`): every HTTP worker behind the one
URL sees every workspace's token, and a `state` issued by one worker is consumed once by whichever
gets the redirect. Tokens are secrets: sealed with ROSTRA_SECRET_KEY, never logged; a workspace's
row goes when it uninstalls the app.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from adapters.slack.install.installations import (
    SCHEMA,
    OAuthStores,
    SqlInstallationStore,
    SqlOAuthStateStore,
)
from adapters.slack.install.sealing import Sealer

_SCHEMA_LOCK = 0x510C_1A57  # serialises the CREATE TABLEs of workers starting at once


class PostgresPool:
    """One small asyncpg pool, opened on first use (inside the running loop), shared by both stores."""

    faults = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError)

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool: asyncpg.Pool | None = None
        self._lock = asyncio.Lock()

    async def pool(self) -> asyncpg.Pool:
        async with self._lock:
            if self._pool is None:
                pool = await asyncpg.create_pool(self.url, min_size=1, max_size=4, timeout=10)
                try:
                    async with pool.acquire() as conn, conn.transaction():
                        await conn.execute("SELECT pg_advisory_xact_lock($1)", _SCHEMA_LOCK)
                        await conn.execute(SCHEMA)
                except BaseException:
                    await pool.close()
                    raise
                self._pool = pool
            return self._pool

    async def execute(self, sql: str, *args: Any) -> None:
        await (await self.pool()).execute(sql, *args)

    async def execute_all(self, *statements: tuple[str, tuple[Any, ...]]) -> None:
        async with (await self.pool()).acquire() as conn, conn.transaction():
            for sql, args in statements:
                await conn.execute(sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await (await self.pool()).fetchval(sql, *args)

    async def column(self, sql: str) -> list[Any]:
        return [row[0] for row in await (await self.pool()).fetch(sql)]

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in await (await self.pool()).fetch(sql)]

    async def close(self) -> None:
        async with self._lock:
            if self._pool is not None:
                await self._pool.close()
                self._pool = None


class PostgresInstallationStore(SqlInstallationStore):
    """Installations in the `slack_installations` table on Postgres."""


def postgres_stores(url: str, sealer: Sealer) -> OAuthStores:
    """The installations (sealed by `sealer`) and the OAuth states on one Postgres database (one
    pool for both)."""
    db = PostgresPool(url)
    return OAuthStores(PostgresInstallationStore(db, sealer), SqlOAuthStateStore(db))
