"""The Postgres fixtures: one real server per test session (testkit/postgres.py), a fresh database
per test. Without server binaries the Postgres tests are skipped with that reason, except under
CI=true, where a missing server is an error: CI must never skip them."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from testkit.postgres import NoPostgres, PostgresServer, running_server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with contextlib.ExitStack() as stack:
        try:
            server = stack.enter_context(running_server())
        except NoPostgres as missing:
            if os.environ.get("CI", "").lower() == "true":
                raise RuntimeError(str(missing)) from None
            pytest.skip(str(missing))
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh database on the session's Postgres server."""
    return postgres_server.new_database()
