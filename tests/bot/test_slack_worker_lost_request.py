"""A Slack request whose worker dies while holding it: what Slack's redelivery covers, and what the
person sees when it does not (two real `rostra slack --http` workers, SQLite and Postgres).

Slack redelivers an event only when it got no HTTP 200 within 3 seconds (the same `event_id`, with
`X-Slack-Retry-Num`), and Bolt acknowledges an event before acting on it. So a worker frozen or dying
before it answered costs nothing: the retry reaches a live worker and is acted on once. A worker
that dies in the moment between its answer and the act loses that one request: nothing is said,
nothing happens, and the person's next try (a new event) works through any worker."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from testkit.slack_api import FakeSlack
from testkit.slack_world import ALICE, CHANNEL, envelope, mention_event, sign
from tests.bot.slack_cluster import (
    LONG_TURNS,
    Worker,
    buttons,
    ephemerals,
    owner_and_other,
    running_card,
    running_workers,
    told,
    worker_env,
)
from tests.helpers import write_script

pytestmark = pytest.mark.slow

TOPIC = "Should cities ban cars?"
SLACK_TIMEOUT = 3.0  # seconds Slack waits for an event's HTTP 200 before it sends the event again


@pytest.fixture
def workers(tmp_path: Path, api: FakeSlack, storage_url: str) -> Iterator[list[Worker]]:
    # a worker waits on a held lock far longer than the test holds one
    env = worker_env(
        storage_url, write_script(tmp_path, LONG_TURNS), api, {"ROSTRA_STORAGE__BUSY_TIMEOUT": "30"}
    )
    with running_workers([env, env], tmp_path / "stderr.log") as started:
        yield started


async def _a_running_debate(api: FakeSlack, workers: list[Worker], storage_url: str) -> tuple[Worker, Worker]:
    await workers[0].event(json.dumps(envelope(mention_event(f"debate {TOPIC}"))))
    await running_card(api, CHANNEL)
    owner, other = await owner_and_other(workers, storage_url, TOPIC)
    await other.ready()
    return owner, other


def _running(api: FakeSlack) -> bool:
    return "rostra_card_status" in buttons(api.top_level(CHANNEL)[0])


async def test_an_event_its_worker_never_answered_is_acted_on_once_through_slack_s_retry(
    api: FakeSlack, workers: list[Worker], storage_url: str
) -> None:
    owner, other = await _a_running_debate(api, workers, storage_url)
    other.process.send_signal(signal.SIGSTOP)  # frozen: it takes the request in, and never answers
    body = json.dumps(envelope(mention_event("stop")))
    headers = {**sign(body), "Content-Type": "application/json"}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=SLACK_TIMEOUT)) as http:
        with pytest.raises(TimeoutError):
            await http.post(other.url, data=body, headers=headers)
    other.kill()
    # Slack sends the same event again, and it reaches the live worker
    retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    assert await owner.post(body, "application/json", retry) == 200
    said = await told(api, ALICE, 1)
    assert said.startswith(f"Stopping the debate on *{TOPIC}*")
    await api.wait_until(lambda: not _running(api), within=30)
    await asyncio.sleep(1.0)  # time for a second answer, if there were one
    assert len(ephemerals(api, ALICE)) == 1


@contextlib.asynccontextmanager
async def _deliveries_held(storage_url: str) -> AsyncIterator[None]:
    """No worker can record an inbound request while inside (its write waits on the lock)."""
    if storage_url.startswith("sqlite"):
        db = sqlite3.connect(storage_url.removeprefix("sqlite:///"), timeout=30, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            yield
            db.execute("ROLLBACK")
        finally:
            db.close()
        return
    conn = await asyncpg.connect(storage_url)
    try:
        async with conn.transaction():
            await conn.execute("LOCK TABLE deliveries IN EXCLUSIVE MODE")
            yield
    finally:
        await conn.close()


async def test_an_event_its_worker_answered_and_died_on_is_lost_and_asking_again_works(
    api: FakeSlack, workers: list[Worker], storage_url: str
) -> None:
    owner, other = await _a_running_debate(api, workers, storage_url)
    async with _deliveries_held(storage_url):
        # answered 200 at once (Slack will not send it again), then held before it acts
        await other.event(json.dumps(envelope(mention_event("stop"))))
        await asyncio.sleep(0.5)
        assert ephemerals(api, ALICE) == []
        other.kill()
    await asyncio.sleep(3.0)  # time for the stop, if it were acted on anywhere
    assert ephemerals(api, ALICE) == [] and _running(api)  # nothing said, nothing done
    # the person sees no answer and asks again: a new event, acted on by the live worker
    await owner.event(json.dumps(envelope(mention_event("stop"))))
    said = await told(api, ALICE, 1)
    assert said.startswith(f"Stopping the debate on *{TOPIC}*")
    await api.wait_until(lambda: not _running(api), within=30)
