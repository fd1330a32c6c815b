"""Fixtures for every test: no secrets or ROSTRA_* settings leak in from the developer's shell."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.config import Config
from core.clock import FakeClock
from tests.helpers import RecordingSink, make_config

# a real Postgres server (`postgres_server`, `postgres_url`), started once per session when asked for
pytest_plugins = ["tests.pg"]

_LEAKY = (
    "ANTHROPIC_API_KEY",
    "DISCORD_TOKEN",
    "SLACK_BOT_TOKEN",
    "SLACK_SIGNING_SECRET",
    "SLACK_APP_TOKEN",
    "ANTHROPIC_BASE_URL",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("ROSTRA_") or name in _LEAKY:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGNO_TELEMETRY", "false")


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store on each backend: a SQLite file in the test's folder, or the session's real Postgres."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'rostra.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return make_config(tmp_path)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


SLACK_TIME_FACTOR = 0.02
"""Tests run Slack's rate limits with time compressed fiftyfold (the benchmark uses the real ones)."""


@pytest.fixture(autouse=True)
def _slack_limits_in_test_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from adapters.slack.delivery import rates as limits

    monkeypatch.setattr(limits, "TIER3", limits.scaled(limits.TIER3, SLACK_TIME_FACTOR))
    monkeypatch.setattr(
        limits, "POSTS_PER_CHANNEL", limits.scaled(limits.POSTS_PER_CHANNEL, SLACK_TIME_FACTOR)
    )
    monkeypatch.setattr(
        limits, "DISTRIBUTED_READ_BACKS", limits.scaled(limits.DISTRIBUTED_READ_BACKS, SLACK_TIME_FACTOR)
    )
