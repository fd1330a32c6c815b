"""A Stop typed while the database and Slack both fail: the Stop goes through as soon as the
database is back, while Slack still fails, and once Slack is back the person is told, in order,
that it waited and that the debate stopped. The "it waits" line used to be said inline, so the
Stop waited for Slack to take it (up to two minutes) and the debate went on meanwhile."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from adapters.slack.render.messages import stopping
from core.outlasting import stop_waits
from core.settings import StorageSettings
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, SLOW_FIRST_TURN, open_harness
from tests.database_away import database_away

pytestmark = pytest.mark.slow

AWAY = 4.0  # seconds the database is locked by another process's long write
SLACK_DOWN = 30.0
STORAGE = {"lease_seconds": 2.0, "heartbeat_seconds": 1.0, "busy_timeout": 0.1}


async def test_a_stop_waiting_for_the_database_is_applied_once_it_is_back_while_slack_still_fails(
    tmp_path: Path, api: FakeSlack, url: str
) -> None:
    clock = HeldClock(hold=5)
    storage = {**STORAGE, "url": url}
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=clock, storage=storage) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: clock.waiting == 1)  # the first turn under way
        told_before = len(slack.ephemerals_to(ALICE))
        held = asyncio.Event()
        away = asyncio.ensure_future(database_away(url, AWAY, held))
        await asyncio.wait_for(held.wait(), 10)
        await asyncio.sleep(1.5)  # past what the lease is good for unconfirmed: the Stop asks the database
        api.down(SLACK_DOWN)
        back = time.monotonic() + SLACK_DOWN

        await slack.mention("stop")
        result = await asyncio.wait_for(handle.wait(), SLACK_DOWN - 5)  # the database back, Slack not
        assert time.monotonic() < back
        assert result.reason.startswith("stopped")
        await away
        record = await slack.rt.store.get_debate(handle.debate_id)
        assert record is not None and record.status == "stopped"

        told = lambda: len(slack.ephemerals_to(ALICE)) >= told_before + 2  # noqa: E731
        await api.wait_until(told, within=SLACK_DOWN + 30)
        assert time.monotonic() >= back
        waits, stopped = slack.ephemerals_to(ALICE)[told_before:]
        assert waits == stop_waits(StorageSettings(**storage))
        assert stopped == stopping("Should cities ban cars?")  # it had stopped by the time it was said
