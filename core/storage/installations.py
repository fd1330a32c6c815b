"""Each workspace's installation of a front end, and the one-time states of install links in flight,
in the store every worker shares (`core.ports.Installations`).

A front end that is installed per workspace (Slack's OAuth install) keeps there what the install
gave it: the store holds it as opaque text under `(platform, key)`, sealed by the front end (tokens
never reach the store in plain text). An install link's `state` is consumed once, by whichever worker
gets the redirect. The statements are written once and spelled per dialect as core.storage.sql does;
each driver runs them on its own writer and reader (`_run_steps`, `_query`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from core.storage import sql
from core.storage.cluster import Steps


@dataclass(frozen=True)
class InstallationStatements:
    save: str
    find: str
    listed: str
    replace: str
    delete: str
    purge_states: str
    bound_states: str
    insert_state: str
    consume_state: str
    count_states: str


_STATEMENTS = InstallationStatements(
    save=(
        "INSERT INTO installations (platform, key, installed_at, data) VALUES ($1, $2, $3, $4)"
        " ON CONFLICT (platform, key) DO UPDATE SET installed_at = excluded.installed_at,"
        " data = excluded.data"
    ),
    find="SELECT data FROM installations WHERE platform = $1 AND key = $2",
    listed="SELECT key, data FROM installations WHERE platform = $1 ORDER BY installed_at, key",
    replace="UPDATE installations SET data = $4 WHERE platform = $1 AND key = $2 AND data = $3",
    delete="DELETE FROM installations WHERE platform = $1 AND key = $2",
    purge_states="DELETE FROM install_states WHERE expires_at < $1",
    bound_states=(  # the oldest links in flight go first
        "DELETE FROM install_states WHERE expires_at <= (SELECT expires_at FROM install_states"
        " ORDER BY expires_at DESC LIMIT 1 OFFSET $1)"
    ),
    insert_state="INSERT INTO install_states (state, expires_at) VALUES ($1, $2)",
    consume_state="DELETE FROM install_states WHERE state = $1 RETURNING expires_at",
    count_states="SELECT COUNT(*) FROM install_states",
)


def _spelled(words: dict[str, str], numbered: str) -> InstallationStatements:
    return InstallationStatements(
        **{
            f.name: sql.spell(getattr(_STATEMENTS, f.name), words, numbered)
            for f in fields(InstallationStatements)
        }
    )


POSTGRES = _spelled(sql.POSTGRES_WORDS, sql.POSTGRES_NUMBERED)
SQLITE = _spelled(sql.SQLITE_WORDS, sql.SQLITE_NUMBERED)

# Schema 4 and before: Slack's front end kept its installations and states in tables of its own, on
# connections of its own. They move into the shared tables once (Slack's key: `enterprise:team`).
LEGACY_TABLES = (
    (
        "slack_installations",
        "INSERT INTO installations (platform, key, installed_at, data)"
        " SELECT 'slack', enterprise_id || ':' || team_id, installed_at, data FROM slack_installations"
        " WHERE true ON CONFLICT DO NOTHING",
    ),
    (
        "slack_oauth_states",
        "INSERT INTO install_states (state, expires_at) SELECT state, expires_at FROM slack_oauth_states"
        " WHERE true ON CONFLICT DO NOTHING",
    ),
)


class KeepsInstallations(ABC):
    """The installation operations, written once over the driver's writer and reader."""

    _installs: InstallationStatements

    @abstractmethod
    async def _run_steps(self, make: Callable[[], Steps]) -> Any:
        """Run the statements of `make()` in one write transaction; the steps' result (see the driver)."""

    @abstractmethod
    async def _query(self, statement: str, params: Sequence[Any]) -> list[Any]:
        """A read (see the driver)."""

    async def save_installation(self, platform: str, key: str, installed_at: float, data: str) -> None:
        def steps() -> Steps:
            yield self._installs.save, (platform, key, installed_at, data)

        await self._run_steps(steps)

    async def installation(self, platform: str, key: str) -> str | None:
        rows = await self._query(self._installs.find, (platform, key))
        return str(rows[0][0]) if rows else None

    async def installations(self, platform: str) -> list[tuple[str, str]]:
        return [(str(r[0]), str(r[1])) for r in await self._query(self._installs.listed, (platform,))]

    async def replace_installation(self, platform: str, key: str, old: str, new: str) -> None:
        def steps() -> Steps:
            yield self._installs.replace, (platform, key, old, new)

        await self._run_steps(steps)

    async def delete_installation(self, platform: str, key: str) -> None:
        def steps() -> Steps:
            yield self._installs.delete, (platform, key)

        await self._run_steps(steps)

    async def issue_state(self, state: str, expires_at: float, *, now: float, most: int) -> None:
        def steps() -> Steps:
            yield self._installs.purge_states, (now,)
            yield self._installs.bound_states, (most - 1,)
            yield self._installs.insert_state, (state, expires_at)

        await self._run_steps(steps)

    async def consume_state(self, state: str) -> float | None:
        def steps() -> Steps:
            rows = yield self._installs.consume_state, (state,)
            return float(rows[0][0]) if rows else None

        expires: float | None = await self._run_steps(steps)
        return expires

    async def live_states(self) -> int:
        return int((await self._query(self._installs.count_states, ()))[0][0])
