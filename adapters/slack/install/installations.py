"""Where Rostra keeps each Slack workspace's installation (its bot token) and the OAuth `state`s in
flight: slack_sdk's async store interfaces, on Rostra's store (`core.ports.Installations`: the
SQLite file, or the Postgres database every worker shares), like everything the workers share.

`InstallationStore` is the interface the rest of the adapter uses (slack_sdk's
`AsyncInstallationStore`, which Bolt's OAuth flow and authorization call). Tokens are secrets: each
row is sealed with ROSTRA_SECRET_KEY (`adapters.slack.install.sealing`; rows from before sealing, or
sealed with an older key, are re-sealed when the store first opens), every token loaded or saved is
masked in the logs (`core.redaction.hold_secret`), and a workspace's row is deleted when it
uninstalls the app or revokes its tokens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from datetime import datetime
from typing import Any

from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from adapters.slack.errors import InstallationsUnavailable
from adapters.slack.install.sealing import Sealer, UnreadableInstallation
from core.errors import StoreError
from core.ports import Installations
from core.redaction import hold_secret

log = logging.getLogger(__name__)

InstallationStore = AsyncInstallationStore
"""The interface: slack_sdk's async installation store (save, find_bot, find_installation, delete_*)."""

LOOKUP_WAIT = 2.0
"""Seconds an installation lookup may take: every request of a workspace waits on it, and Slack
gives a slash command or a click three seconds for its answer (`InstallationsUnavailable` after)."""
STATE_SECONDS = 600  # an install link's `state` is good for ten minutes
MAX_STATES = 10_000  # install links in flight at most (the page is also limited per client)
PLATFORM = "slack"


def _plain(name: str, value: Any) -> Any:
    """JSON for a field: a time as seconds, whole for token expiries (slack_sdk reads them as int)."""
    if not isinstance(value, datetime):
        return value
    return int(value.timestamp()) if name.endswith("_expires_at") else value.timestamp()


def _key(enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False) -> str:
    """`enterprise:team`; org-wide installs are keyed by the enterprise alone."""
    return f"{enterprise_id or ''}:{'' if is_enterprise_install else (team_id or '')}"


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


class StoredInstallations(WholeInstallations):
    """Installations in Rostra's store: one per workspace (or org), sealed."""

    def __init__(self, store: Installations, sealer: Sealer) -> None:
        self._store = store
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
                (key, data)
                for key, data in await self._store.installations(PLATFORM)
                if not self._sealer.is_current(data)
            ]
            for key, data in stale:
                try:
                    sealed = self._sealer.seal(self._sealer.open(data))
                except UnreadableInstallation as exc:
                    log.warning("Slack workspace %s: %s; reinstall it", key.strip(":"), exc)
                    continue
                await self._store.replace_installation(PLATFORM, key, data, sealed)
            if stale:
                log.info("sealed %d stored Slack installation(s) with the first secret key", len(stale))
            self._resealed = True
            return len(stale)

    async def async_save(self, installation: Installation) -> None:
        await self.reseal()
        _hold_tokens(installation)
        data = {k: _plain(k, v) for k, v in installation.to_dict_for_copying().items()}
        key = _key(installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        sealed = self._sealer.seal(json.dumps(data))
        await self._store.save_installation(PLATFORM, key, float(installation.installed_at), sealed)
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
        try:
            data = await asyncio.wait_for(self._stored(key), LOOKUP_WAIT)
        except (TimeoutError, StoreError) as exc:
            raise InstallationsUnavailable(f"workspace {team_id or enterprise_id}: {exc!r}") from None
        if data is None:
            return None
        try:
            plain = self._sealer.open(data)
        except UnreadableInstallation as exc:  # as if not installed: the workspace installs again
            log.warning("Slack workspace %s: %s; reinstall it", team_id or enterprise_id, exc)
            return None
        installation = Installation(**json.loads(plain))
        _hold_tokens(installation)
        return installation

    async def _stored(self, key: str) -> str | None:
        await self.reseal()
        return await self._store.installation(PLATFORM, key)

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        await self._store.delete_installation(PLATFORM, _key(enterprise_id, team_id))


def _hold_tokens(installation: Installation) -> None:
    """Mask the installation's tokens in every log line from now on."""
    hold_secret(
        installation.bot_token,
        installation.bot_refresh_token,
        installation.user_token,
        installation.user_refresh_token,
    )


class StoredOAuthStates(AsyncOAuthStateStore):
    """The `state` of each install link, used once (a replayed or stale redirect is refused), by
    whichever worker gets the redirect."""

    def __init__(
        self, store: Installations, expiration_seconds: int = STATE_SECONDS, max_states: int = MAX_STATES
    ) -> None:
        self._store = store
        self._ttl = expiration_seconds
        self._max = max_states

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = uuid.uuid4().hex
        now = time.time()
        await self._store.issue_state(state, now + self._ttl, now=now, most=self._max)
        return state

    async def live(self) -> int:
        """How many install links are in flight (states stored)."""
        return await self._store.live_states()

    async def async_consume(self, state: str) -> bool:
        expires = await self._store.consume_state(state)
        return expires is not None and expires >= time.time()


class OAuthStores:
    """The installations and the OAuth states, in Rostra's store."""

    def __init__(self, store: Installations, sealer: Sealer) -> None:
        self.installations: InstallationStore = StoredInstallations(store, sealer)
        self.states = StoredOAuthStates(store)
