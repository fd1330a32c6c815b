"""What the bot tests share: the worker processes' log shown with a failure; the database a test's
processes use, on each backend; the local Slack Web API (a module with another platform's fake names
its own `api`); the local Anthropic API."""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from pathlib import Path
from typing import Any

import pytest

from testkit.anthropic_api import FakeAnthropic
from testkit.slack_api import FakeSlack

LOG_TAIL = 12_000  # characters of the worker processes' log shown with a failure


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A failing test that ran worker processes shows the end of their log (`stderr.log` in its
    folder, each line led by the process id): what the workers did is otherwise lost with the run."""
    report = yield
    tmp_path = getattr(item, "funcargs", {}).get("tmp_path")
    if report.failed and call.when == "call" and isinstance(tmp_path, Path):
        log = tmp_path / "stderr.log"
        if log.exists():
            tail = log.read_text(errors="replace")[-LOG_TAIL:]
            report.sections.append(("worker processes' log (its end)", tail))
    return report


@pytest.fixture
def storage_url(url: str) -> str:
    """The store each bot test runs on: both backends, from `url` in tests/conftest.py."""
    return url


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
