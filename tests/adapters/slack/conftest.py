"""The Slack test fixtures: a fresh fake Web API (`api`) and the app on it (`slack`). The harness
itself (testkit/slack_world.py) is shared with the benchmarks; its names are exported here for the
tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testkit.slack_api import FakeSlack
from testkit.slack_world import (
    ALICE,
    APP_TOKEN,
    BOB,
    BOT_TOKEN,
    CAROL,
    CHANNEL,
    DAN,
    ERIN,
    SCRIPT,
    SIGNING_SECRET,
    SLOW_FIRST_TURN,
    Harness,
    SlashReply,
    blocks_text,
    envelope,
    mention_event,
    open_harness,
    reaction_event,
    sign,
    slash_fields,
)

__all__ = [
    "ALICE",
    "APP_TOKEN",
    "BOB",
    "BOT_TOKEN",
    "CAROL",
    "CHANNEL",
    "DAN",
    "ERIN",
    "SCRIPT",
    "SIGNING_SECRET",
    "SLOW_FIRST_TURN",
    "Harness",
    "SlashReply",
    "blocks_text",
    "envelope",
    "mention_event",
    "open_harness",
    "reaction_event",
    "sign",
    "slash_fields",
]


@pytest.fixture
async def api() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def slack(tmp_path: Path, api: FakeSlack) -> AsyncIterator[Harness]:
    async with open_harness(tmp_path, api) as harness:
        yield harness
