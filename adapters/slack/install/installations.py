"""Where Rostra keeps each Slack workspace's installation (its bot token) and the OAuth `state`s in
flight: slack_sdk's async store interfaces, implemented on Rostra's SQLite file (own tables).

`InstallationStore` is the interface the rest of the adapter uses (slack_sdk's
`AsyncInstallationStore`, which Bolt's OAuth flow and authorization call). The stores are written
once over a few SQL calls (`Sql`); `_SQLite` runs them on the SQLite file, and
`adapters.slack.install.installations_pg` on Postgres.
Tokens are secrets: each row is sealed with ROSTRA_SECRET_KEY (`adapters.slack.install.sealing`;
rows from before sealing, or sealed with an older key, are re-sealed when the store first opens),
every token loaded or saved is masked in the logs (`core.redaction.hold_secret`), and a workspace's
row is deleted when it uninstalls the app or revokes its tokens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import aiosqlite
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from adapters.slack.errors import InstallationsUnavailable
from adapters.slack.install.sealing import Sealer, UnreadableInstallation
from core.redaction import hold_secret

log = logging.getLogger(__name__)

InstallationStore = AsyncInstallationStore
"""The interface: slack_sdk's async installation store (save, find_bot, find_installation, delete_*)."""

LOOKUP_WAIT = 2.0
"""Seconds an installation lookup may take: every request of a workspace waits on it, and Slack
gives a slash command or a click three seconds for its answer (`InstallationsUnavailable` after)."""
STATE_SECONDS = 600  # an install link's `state` is good for ten minutes
MAX_STATES = 10_000  # install links in flight at most (the page is also limited per client)
SCHEMA = """
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
_PARAMETER = re.compile(r"\$\d+")


class Sql(Protocol):
    """What the stores need of a database; statements are written with `$1, $2, …` parameters."""

    async def execute(self, sql: str, *args: Any) -> None: ...

    async def execute_all(self, *statements: tuple[str, tuple[Any, ...]]) -> None:
        """The statements in one transaction."""

    async def fetchval(self, sql: str, *args: Any) -> Any:
        """The first column of the first row (None without a row); a writing statement is committed."""

    async def column(self, sql: str) -> list[Any]: ...

    async def rows(self, sql: str) -> list[tuple[Any, ...]]: ...

    async def close(self) -> None: ...

    @property
    def faults(self) -> tuple[type[Exception], ...]:
        """The errors that mean the database did not answer (not a fault in the statement)."""


def _plain(name: str, value: Any) -> Any:
    """JSON for a field: a time as seconds, whole for token expiries (slack_sdk reads them as int)."""
    if not isinstance(value, datetime):
        return value
    return int(value.timestamp()) if name.endswith("_expires_at") else value.timestamp()


def _key(
    enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None
) -> tuple[str, str]:
    """Org-wide installs are keyed by the enterprise alone."""
    return (enterprise_id or "", "" if is_enterprise_install else (team_id or ""))


class _SQLite:
    """One aiosqlite connection to the file, opened on first use (inside the running loop)."""

    faults = (sqlite3.Error, OSError)

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
                await conn.executescript(SCHEMA)
                await conn.commit()
                self._conn = conn
            return self._conn

    async def execute(self, sql: str, *args: Any) -> None:
        await self.execute_all((sql, args))

    async def execute_all(self, *statements: tuple[str, tuple[Any, ...]]) -> None:
        conn = await self.conn()
        for sql, args in statements:
            await conn.execute(_PARAMETER.sub("?", sql), args)
        await conn.commit()

    async def fetchval(self, sql: str, *args: Any) -> Any:
        conn = await self.conn()
        async with conn.execute(_PARAMETER.sub("?", sql), args) as cur:
            row = await cur.fetchone()
        await conn.commit()
        return None if row is None else row[0]

    async def column(self, sql: str) -> list[Any]:
        conn = await self.conn()
        async with conn.execute(sql) as cur:
            return [r[0] for r in await cur.fetchall()]

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        conn = await self.conn()
        async with conn.execute(sql) as cur:
            return [tuple(r) for r in await cur.fetchall()]

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


class SqlInstallationStore(WholeInstallations):
    """Installations in the `slack_installations` table: one row per workspace (or org), sealed."""

    def __init__(self, db: Sql, sealer: Sealer) -> None:
        self._db = db
        self._sealer = sealer
        self._resealed = False
        self._reseal_lock = asyncio.Lock()

    @property
    def logger(self) -> logging.Logger:
        return log

    async def reseal(self) -> int:
        """Seal the rows stored in plain JSON (from before sealing) or with an older key, with the
        first key; once per store, before its first read or write. Returns how many it re-sealed."""
        async with self._reseal_lock:
            if self._resealed:
                return 0
            stale = [
                (enterprise, team, data)
                for enterprise, team, data in await self._db.rows(
                    "SELECT enterprise_id, team_id, data FROM slack_installations"
                )
                if not self._sealer.is_current(str(data))
            ]
            for enterprise, team, data in stale:
                try:
                    sealed = self._sealer.seal(self._sealer.open(str(data)))
                except UnreadableInstallation as exc:
                    log.warning("Slack workspace %s: %s; reinstall it", team or enterprise, exc)
                    continue
                await self._db.execute(  # unless another worker changed it meanwhile
                    "UPDATE slack_installations SET data = $1"
                    " WHERE enterprise_id = $2 AND team_id = $3 AND data = $4",
                    sealed,
                    enterprise,
                    team,
                    data,
                )
            if stale:
                log.info("sealed %d stored Slack installation(s) with the first secret key", len(stale))
            self._resealed = True
            return len(stale)

    async def async_save(self, installation: Installation) -> None:
        await self.reseal()
        _hold_tokens(installation)
        data = {k: _plain(k, v) for k, v in installation.to_dict_for_copying().items()}
        key = _key(installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        await self._db.execute(
            "INSERT INTO slack_installations (enterprise_id, team_id, installed_at, data)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (enterprise_id, team_id)"
            " DO UPDATE SET installed_at = EXCLUDED.installed_at, data = EXCLUDED.data",
            *key,
            float(installation.installed_at),
            self._sealer.seal(json.dumps(data)),
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
        """The workspace's installation, or None; InstallationsUnavailable when the database does not
        answer within `LOOKUP_WAIT` (Bolt calls this for every request, to authorize it)."""
        key = _key(enterprise_id, team_id, is_enterprise_install)
        away: tuple[type[Exception], ...] = (TimeoutError, *self._db.faults)
        try:
            data = await asyncio.wait_for(self._stored(key), LOOKUP_WAIT)
        except away as exc:
            raise InstallationsUnavailable(f"workspace {team_id or enterprise_id}: {exc!r}") from None
        if data is None:
            return None
        try:
            plain = self._sealer.open(str(data))
        except UnreadableInstallation as exc:  # as if not installed: the workspace installs again
            log.warning("Slack workspace %s: %s; reinstall it", team_id or enterprise_id, exc)
            return None
        installation = Installation(**json.loads(plain))
        _hold_tokens(installation)
        return installation

    async def _stored(self, key: tuple[str, str]) -> Any:
        await self.reseal()
        return await self._db.fetchval(
            "SELECT data FROM slack_installations WHERE enterprise_id = $1 AND team_id = $2", *key
        )

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        await self._db.execute(
            "DELETE FROM slack_installations WHERE enterprise_id = $1 AND team_id = $2",
            enterprise_id or "",
            team_id or "",
        )

    async def teams(self) -> list[str]:
        """The workspaces that have Rostra installed."""
        await self.reseal()
        teams = await self._db.column("SELECT team_id FROM slack_installations ORDER BY installed_at")
        return [str(team) for team in teams if team]

    async def close(self) -> None:
        await self._db.close()


def _hold_tokens(installation: Installation) -> None:
    """Mask the installation's tokens in every log line from now on."""
    hold_secret(
        installation.bot_token,
        installation.bot_refresh_token,
        installation.user_token,
        installation.user_refresh_token,
    )


class SqlOAuthStateStore(AsyncOAuthStateStore):
    """The `state` of each install link, used once (a replayed or stale redirect is refused), by
    whichever worker gets the redirect."""

    def __init__(
        self, db: Sql, expiration_seconds: int = STATE_SECONDS, max_states: int = MAX_STATES
    ) -> None:
        self._db = db
        self._ttl = expiration_seconds
        self._max = max_states

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = uuid.uuid4().hex
        now = time.time()
        await self._db.execute_all(
            ("DELETE FROM slack_oauth_states WHERE expires_at < $1", (now,)),
            (  # bounded: the oldest links in flight go first
                "DELETE FROM slack_oauth_states WHERE expires_at <= (SELECT expires_at FROM"
                " slack_oauth_states ORDER BY expires_at DESC LIMIT 1 OFFSET $1)",
                (self._max - 1,),
            ),
            ("INSERT INTO slack_oauth_states VALUES ($1, $2)", (state, now + self._ttl)),
        )
        return state

    async def live(self) -> int:
        """How many install links are in flight (states stored)."""
        return int(await self._db.fetchval("SELECT COUNT(*) FROM slack_oauth_states") or 0)

    async def async_consume(self, state: str) -> bool:
        expires = await self._db.fetchval(
            "DELETE FROM slack_oauth_states WHERE state = $1 RETURNING expires_at", state
        )
        return expires is not None and float(expires) >= time.time()

    async def close(self) -> None:
        await self._db.close()


class OAuthStores:
    """The installations and the OAuth states, on one database."""

    def __init__(self, installations: InstallationStore, states: AsyncOAuthStateStore) -> None:
        self.installations = installations
        self.states = states

    @classmethod
    def sqlite(cls, path: Path | str, sealer: Sealer) -> OAuthStores:
        """The stores in the SQLite file at `path`, installations sealed by `sealer`."""
        return cls(SqlInstallationStore(_SQLite(Path(path)), sealer), SqlOAuthStateStore(_SQLite(Path(path))))

    async def close(self) -> None:
        for store in (self.installations, self.states):
            close = getattr(store, "close", None)
            if close is not None:
                await close()
