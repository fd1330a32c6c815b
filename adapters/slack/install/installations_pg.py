"""Each Slack workspace's installation and the OAuth `state`s in flight, on Postgres (asyncpg).

The same slack_sdk interfaces as the SQLite stores in `adapters.slack.install.installations`, for a Rostra
whose store is Postgres (`storage.url: postgresql://…`): every HTTP worker behind the one URL sees
every workspace's token, and a `state` issued by one worker is consumed once by whichever gets the
redirect. Tokens are secrets: never logged; a workspace's row goes when it uninstalls the app.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any

import asyncpg
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from adapters.slack.install.installations import STATE_SECONDS, OAuthStores, WholeInstallations, _key, _plain

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS slack_installations (
    enterprise_id TEXT NOT NULL DEFAULT '',
    team_id TEXT NOT NULL DEFAULT '',
    installed_at DOUBLE PRECISION NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (enterprise_id, team_id)
);
CREATE TABLE IF NOT EXISTS slack_oauth_states (
    state TEXT PRIMARY KEY,
    expires_at DOUBLE PRECISION NOT NULL
);
"""
_SCHEMA_LOCK = 0x510C_1A57  # serialises the CREATE TABLEs of workers starting at once


class PostgresPool:
    """One small asyncpg pool, opened on first use (inside the running loop), shared by both stores."""

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
                        await conn.execute(_SCHEMA)
                except BaseException:
                    await pool.close()
                    raise
                self._pool = pool
            return self._pool

    async def close(self) -> None:
        async with self._lock:
            if self._pool is not None:
                await self._pool.close()
                self._pool = None


class PostgresInstallationStore(WholeInstallations):
    """Installations in the `slack_installations` table: one row per workspace (or org)."""

    def __init__(self, db: PostgresPool) -> None:
        self._db = db

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_save(self, installation: Installation) -> None:
        data = {k: _plain(v) for k, v in installation.to_dict_for_copying().items()}
        key = _key(installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        pool = await self._db.pool()
        await pool.execute(
            "INSERT INTO slack_installations (enterprise_id, team_id, installed_at, data)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (enterprise_id, team_id)"
            " DO UPDATE SET installed_at = EXCLUDED.installed_at, data = EXCLUDED.data",
            *key,
            float(installation.installed_at),
            json.dumps(data),
        )
        log.info("Slack workspace %s installed Rostra", installation.team_id or installation.enterprise_id)

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        pool = await self._db.pool()
        data = await pool.fetchval(
            "SELECT data FROM slack_installations WHERE enterprise_id = $1 AND team_id = $2",
            *_key(enterprise_id, team_id, is_enterprise_install),
        )
        return None if data is None else Installation(**json.loads(data))

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        pool = await self._db.pool()
        await pool.execute(
            "DELETE FROM slack_installations WHERE enterprise_id = $1 AND team_id = $2",
            enterprise_id or "",
            team_id or "",
        )

    async def teams(self) -> list[str]:
        """The workspaces that have Rostra installed."""
        pool = await self._db.pool()
        rows = await pool.fetch("SELECT team_id FROM slack_installations ORDER BY installed_at")
        return [str(r["team_id"]) for r in rows if r["team_id"]]

    async def close(self) -> None:
        await self._db.close()


class PostgresOAuthStateStore(AsyncOAuthStateStore):
    """The `state` of each install link, used once, by whichever worker gets the redirect."""

    def __init__(self, db: PostgresPool, expiration_seconds: int = STATE_SECONDS) -> None:
        self._db = db
        self._ttl = expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = uuid.uuid4().hex
        now = time.time()
        pool = await self._db.pool()
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("DELETE FROM slack_oauth_states WHERE expires_at < $1", now)
            await conn.execute("INSERT INTO slack_oauth_states VALUES ($1, $2)", state, now + self._ttl)
        return state

    async def async_consume(self, state: str) -> bool:
        pool = await self._db.pool()
        expires = await pool.fetchval(
            "DELETE FROM slack_oauth_states WHERE state = $1 RETURNING expires_at", state
        )
        return expires is not None and float(expires) >= time.time()

    async def close(self) -> None:
        await self._db.close()


def postgres_stores(url: str) -> OAuthStores:
    """The installations and the OAuth states on one Postgres database (one pool for both)."""
    db = PostgresPool(url)
    return OAuthStores(PostgresInstallationStore(db), PostgresOAuthStateStore(db))
