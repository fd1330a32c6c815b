"""Where Rostra keeps each Slack workspace's installation (its bot token) and the OAuth `state`s in
flight: slack_sdk's async store interfaces, implemented on Rostra's SQLite file (own tables).

`InstallationStore` is the interface the rest of the adapter uses (slack_sdk's
`AsyncInstallationStore`, which Bolt's OAuth flow and authorization call). `SQLiteInstallationStore`
is the SQLite implementation; `adapters.slack.install.installations_pg` has the Postgres one (same methods).
Tokens are secrets: they are never logged, and a workspace's row is deleted when it uninstalls the
app or revokes its tokens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import aiosqlite
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

log = logging.getLogger(__name__)

InstallationStore = AsyncInstallationStore
"""The interface: slack_sdk's async installation store (save, find_bot, find_installation, delete_*)."""

STATE_SECONDS = 600  # an install link's `state` is good for ten minutes
_SCHEMA = """
CREATE TABLE IF NOT EXISTS slack_installations (
    enterprise_id TEXT NOT NULL DEFAULT '',
    team_id TEXT NOT NULL DEFAULT '',
    installed_at REAL NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (enterprise_id, team_id)
);
CREATE TABLE IF NOT EXISTS slack_oauth_states (
    state TEXT PRIMARY KEY,
    expires_at REAL NOT NULL
);
"""


def _plain(value: Any) -> Any:
    return value.timestamp() if isinstance(value, datetime) else value


def _key(
    enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None
) -> tuple[str, str]:
    """Org-wide installs are keyed by the enterprise alone."""
    return (enterprise_id or "", "" if is_enterprise_install else (team_id or ""))


class _SQLite:
    """One aiosqlite connection to the file, opened on first use (inside the running loop)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    async def conn(self) -> aiosqlite.Connection:
        async with self._lock:
            if self._conn is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = await aiosqlite.connect(self.path)
                await conn.execute("PRAGMA busy_timeout=5000")
                await conn.executescript(_SCHEMA)
                await conn.commit()
                self._conn = conn
            return self._conn

    async def close(self) -> None:
        async with self._lock:
            if self._conn is not None:
                await self._conn.close()
                self._conn = None


class WholeInstallations(AsyncInstallationStore):
    """An installation store that keeps each workspace's installation whole (`async_save`): its bot
    is read from it and deleted with it."""

    async def async_save_bot(self, bot: Bot) -> None:
        raise NotImplementedError("installations are saved whole (async_save)")

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        installation = await self.async_find_installation(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=is_enterprise_install
        )
        if installation is None or not installation.bot_token:
            return None
        bot: Bot = installation.to_bot()
        return bot

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self.async_delete_installation(enterprise_id=enterprise_id, team_id=team_id)


class SQLiteInstallationStore(WholeInstallations):
    """Installations in the `slack_installations` table: one row per workspace (or org)."""

    def __init__(self, path: Path | str) -> None:
        self._db = _SQLite(Path(path))

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_save(self, installation: Installation) -> None:
        data = {k: _plain(v) for k, v in installation.to_dict_for_copying().items()}
        key = _key(installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        conn = await self._db.conn()
        await conn.execute(
            "INSERT OR REPLACE INTO slack_installations (enterprise_id, team_id, installed_at, data)"
            " VALUES (?, ?, ?, ?)",
            (*key, float(installation.installed_at), json.dumps(data)),
        )
        await conn.commit()
        log.info("Slack workspace %s installed Rostra", installation.team_id or installation.enterprise_id)

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        conn = await self._db.conn()
        key = _key(enterprise_id, team_id, is_enterprise_install)
        async with conn.execute(
            "SELECT data FROM slack_installations WHERE enterprise_id = ? AND team_id = ?", key
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        return Installation(**json.loads(row[0]))

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        conn = await self._db.conn()
        await conn.execute(
            "DELETE FROM slack_installations WHERE enterprise_id = ? AND team_id = ?",
            (enterprise_id or "", team_id or ""),
        )
        await conn.commit()

    async def teams(self) -> list[str]:
        """The workspaces that have Rostra installed."""
        conn = await self._db.conn()
        async with conn.execute("SELECT team_id FROM slack_installations ORDER BY installed_at") as cur:
            return [str(r[0]) for r in await cur.fetchall() if r[0]]

    async def close(self) -> None:
        await self._db.close()


class SQLiteOAuthStateStore(AsyncOAuthStateStore):
    """The `state` of each install link, used once (a replayed or stale redirect is refused)."""

    def __init__(self, path: Path | str, expiration_seconds: int = STATE_SECONDS) -> None:
        self._db = _SQLite(Path(path))
        self._ttl = expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = uuid.uuid4().hex
        conn = await self._db.conn()
        now = time.time()
        await conn.execute("DELETE FROM slack_oauth_states WHERE expires_at < ?", (now,))
        await conn.execute("INSERT INTO slack_oauth_states VALUES (?, ?)", (state, now + self._ttl))
        await conn.commit()
        return state

    async def async_consume(self, state: str) -> bool:
        conn = await self._db.conn()
        async with conn.execute(
            "DELETE FROM slack_oauth_states WHERE state = ? RETURNING expires_at", (state,)
        ) as cur:
            row = await cur.fetchone()
        await conn.commit()
        return row is not None and float(row[0]) >= time.time()

    async def close(self) -> None:
        await self._db.close()


class OAuthStores:
    """The installations and the OAuth states, on one SQLite file."""

    def __init__(self, installations: InstallationStore, states: AsyncOAuthStateStore) -> None:
        self.installations = installations
        self.states = states

    @classmethod
    def sqlite(cls, path: Path | str) -> OAuthStores:
        return cls(SQLiteInstallationStore(path), SQLiteOAuthStateStore(path))

    async def close(self) -> None:
        for store in (self.installations, self.states):
            close = getattr(store, "close", None)
            if close is not None:
                await close()
