"""Workspaces' tokens sealed at rest, on SQLite and on Postgres: an install through the real Bolt app
stores no token in the clear; rows from before sealing, and rows sealed with a rotated-out key, are
read and re-sealed with the first key when the store opens; the tokens loaded are masked in the logs;
`rostra slack` refuses many-workspace mode without a usable ROSTRA_SECRET_KEY (exit 2, one line)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest
from cryptography.fernet import Fernet
from slack_sdk.oauth.installation_store.models.installation import Installation

from adapters.slack.install.installations import OAuthStores, StoredInstallations
from adapters.slack.install.sealing import Sealer
from bot.cli import main
from bot.config import Secrets
from core.ports import Installations
from core.redaction import redact
from core.storage import open_store
from testkit.slack_api import FakeSlack
from testkit.slack_views import CLIENT_ID, CLIENT_SECRET
from tests.adapters.slack.conftest import SIGNING_SECRET
from tests.adapters.slack.test_oauth import SECOND, SECRET_KEY, install, oauth_harness

Row = tuple[str, str, float, str]
LEGACY = (  # the tables Slack's front end kept of its own, schema 4 and before
    "CREATE TABLE slack_installations (enterprise_id TEXT NOT NULL DEFAULT '', team_id TEXT NOT NULL"
    " DEFAULT '', installed_at DOUBLE PRECISION NOT NULL, data TEXT NOT NULL,"
    " PRIMARY KEY (enterprise_id, team_id))",
    "CREATE TABLE slack_oauth_states (state TEXT PRIMARY KEY, expires_at DOUBLE PRECISION NOT NULL)",
    "UPDATE schema_version SET version = 4",
)


class Backend:
    """One database (Rostra's store) for the stores, and raw access to its installations' rows."""

    def __init__(
        self,
        url: str,
        run: Callable[[str, tuple[object, ...]], Awaitable[list[tuple[object, ...]]]],
        parameter: str,
    ) -> None:
        self.url = url
        self._run = run
        self._p = parameter  # how the dialect writes parameter n

    @asynccontextmanager
    async def opened(self, keys: str) -> AsyncIterator[OAuthStores]:
        store = await open_store(self.url)
        try:
            assert isinstance(store, Installations)
            yield OAuthStores(store, Sealer(keys))
        finally:
            await store.close()

    async def rows(self) -> list[str]:
        return [str(r[0]) for r in await self._run("SELECT data FROM installations", ())]

    async def write(self, row: Row, table: str = "installations") -> None:
        await self._run(
            f"INSERT INTO {table} VALUES ({', '.join(self._p.format(n) for n in (1, 2, 3, 4))})", row
        )

    async def execute(self, statement: str) -> None:
        await self._run(statement, ())


def sqlite_backend(path: Path) -> Backend:
    async def run(statement: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        with sqlite3.connect(path) as db:
            return [tuple(r) for r in db.execute(statement, args)]

    return Backend(f"sqlite:///{path}", run, "?{}")


def postgres_backend(url: str) -> Backend:
    async def run(statement: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        conn = await asyncpg.connect(url)
        try:
            return [tuple(r) for r in await conn.fetch(statement, *args)]
        finally:
            await conn.close()

    return Backend(url, run, "${}")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        return sqlite_backend(tmp_path / "rostra.db")
    return postgres_backend(str(request.getfixturevalue("postgres_url")))


def an_installation(
    token: str = "xoxb-2-sealed-token", refresh: str = "xoxe-1-refresh-token"
) -> Installation:
    return Installation(
        app_id="A0001",
        team_id=SECOND,
        user_id="UADMIN",
        bot_token=token,
        bot_id="B0001",
        bot_user_id="UBOT",
        bot_scopes=["chat:write"],
        bot_refresh_token=refresh,
        bot_token_expires_in=43200,
        installed_at=time.time(),
    )


def plain_row(installation: Installation) -> Row:
    """The row as Rostra wrote it before installations were sealed: the installation as JSON."""
    data = {
        k: v.timestamp() if hasattr(v, "timestamp") else v
        for k, v in installation.to_dict_for_copying().items()
        if not k.endswith("_expires_at")  # kept by `bot_token_expires_in`
    }
    return ("slack", f":{SECOND}", float(installation.installed_at), json.dumps(data))


async def test_a_saved_installation_keeps_no_token_in_the_clear(backend: Backend) -> None:
    async with backend.opened(SECRET_KEY) as stores:
        await stores.installations.async_save(an_installation())
        [stored] = await backend.rows()
        assert stored.startswith("fernet:")
        assert "xoxb-2-sealed-token" not in stored and "xoxe-1-refresh-token" not in stored
        bot = await stores.installations.async_find_bot(enterprise_id=None, team_id=SECOND)
        assert bot is not None and bot.bot_token == "xoxb-2-sealed-token"
        assert bot.bot_refresh_token == "xoxe-1-refresh-token"
    other_key = Fernet.generate_key().decode()
    async with backend.opened(other_key) as stores:  # a copy of the database without the key
        assert await stores.installations.async_find_bot(enterprise_id=None, team_id=SECOND) is None
    [still] = await backend.rows()
    assert still == stored  # left as it was, for the right key


async def test_rows_from_before_sealing_are_read_and_sealed_when_the_store_opens(backend: Backend) -> None:
    async with backend.opened(SECRET_KEY) as stores:
        await stores.installations.async_find_bot(enterprise_id=None, team_id="T-NONE")  # creates the table
    await backend.write(plain_row(an_installation(token="xoxb-2-written-in-the-clear")))
    async with backend.opened(SECRET_KEY) as stores:
        assert isinstance(stores.installations, StoredInstallations)
        bot = await stores.installations.async_find_bot(enterprise_id=None, team_id=SECOND)
        assert bot is not None and bot.bot_token == "xoxb-2-written-in-the-clear"
        [stored] = await backend.rows()
        assert stored.startswith("fernet:") and "xoxb-2-written-in-the-clear" not in stored


async def test_installations_kept_in_slacks_own_tables_move_into_the_store(backend: Backend) -> None:
    """Until schema 5 the Slack front end kept its installations and install links in tables of its
    own; a store opening such a database moves their rows into its shared tables, once."""
    async with backend.opened(SECRET_KEY):
        pass  # the store's schema, then the tables of before
    for statement in LEGACY:
        await backend.execute(statement)
    _, _, at, data = plain_row(an_installation(token="xoxb-2-kept-by-slack"))
    await backend.write(("", SECOND, at, data), "slack_installations")
    await backend.execute("INSERT INTO slack_oauth_states VALUES ('state-in-flight', 9999999999)")
    async with backend.opened(SECRET_KEY) as stores:
        bot = await stores.installations.async_find_bot(enterprise_id=None, team_id=SECOND)
        assert bot is not None and bot.bot_token == "xoxb-2-kept-by-slack"
        assert await stores.states.async_consume("state-in-flight")
        [stored] = await backend.rows()
        assert stored.startswith("fernet:")  # and sealed, as any row from before sealing
    with pytest.raises((sqlite3.OperationalError, asyncpg.UndefinedTableError)):
        await backend.execute("SELECT 1 FROM slack_installations")  # gone, tokens and all


async def test_a_rotated_key_still_opens_and_its_rows_are_resealed_with_the_new_one(
    backend: Backend,
) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    async with backend.opened(old) as stores:
        await stores.installations.async_save(an_installation())
    async with backend.opened(f"{new}, {old}") as stores:  # the first seals, both open
        bot = await stores.installations.async_find_bot(enterprise_id=None, team_id=SECOND)
        assert bot is not None and bot.bot_token == "xoxb-2-sealed-token"
    async with backend.opened(new) as stores:  # the old key can go once the store has opened
        bot = await stores.installations.async_find_bot(enterprise_id=None, team_id=SECOND)
        assert bot is not None and bot.bot_token == "xoxb-2-sealed-token"


async def test_every_installation_token_is_masked_in_the_logs(backend: Backend) -> None:
    odd_shapes = an_installation(token="bot-token-of-no-known-shape", refresh="refresh-of-no-known-shape")
    async with backend.opened(SECRET_KEY) as stores:
        await stores.installations.async_save(odd_shapes)
    line = redact("saved bot-token-of-no-known-shape and refresh-of-no-known-shape")
    assert "no-known-shape" not in line


async def test_an_install_over_http_stores_the_token_sealed(tmp_path: Path, api: FakeSlack) -> None:
    async with oauth_harness(tmp_path, api) as slack:
        await install(slack, SECOND)
        (token,) = api.installs.tokens
    raw = (tmp_path / "rostra.db").read_bytes()
    assert token.encode() not in raw


@pytest.mark.parametrize(
    ("key", "says"),
    [(None, "ROSTRA_SECRET_KEY is not set"), ("not-a-key", "ROSTRA_SECRET_KEY is not a Fernet key")],
)
def test_many_workspaces_without_a_usable_key_refuse_to_start(
    key: str | None, says: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in {
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_CLIENT_ID": CLIENT_ID,
        "SLACK_CLIENT_SECRET": CLIENT_SECRET,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    monkeypatch.delenv("ROSTRA_SECRET_KEY", raising=False)
    if key is not None:
        monkeypatch.setenv("ROSTRA_SECRET_KEY", key)
    assert Secrets().slack_client_id is not None
    assert main(["slack"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert says in line
    assert 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"' in line
