"""What the bot tests share: the database a test's processes use, on each backend; the local Slack
Web API (a module with another platform's fake names its own `api`); the local Anthropic API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testkit.anthropic_api import FakeAnthropic
from testkit.slack_api import FakeSlack


@pytest.fixture(params=["sqlite", "postgres"])
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A SQLite file in the test's folder, or the session's real Postgres (tests/conftest.py)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'rostra.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def api() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def claude() -> AsyncIterator[FakeAnthropic]:
    """Anthropic's API, taking a second over each answer; each call's text is its own."""
    fake = FakeAnthropic(turn_text=lambda n: f"Claude speaks, call {n}: cars clog cities.", thinking=1.0)
    await fake.start()
    yield fake
    await fake.stop()
