"""Two `rostra slack --http` workers behind one URL on one database act as one bot: a mention
delivered to both starts one debate, a second start in the busy channel is refused by the other
worker, and `stop` and the card's Status and Stop buttons work through the worker that does not run
the debate (real processes, the Web API fake, SQLite and Postgres)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import asyncpg
import pytest

from testkit.slack_api import TEAM, FakeSlack
from testkit.slack_world import (
    ALICE,
    BOB,
    BOT_TOKEN,
    CHANNEL,
    SCRIPT,
    SIGNING_SECRET,
    envelope,
    mention_event,
    sign,
)
from tests.helpers import CONFIG_PATH, REPO, write_script

pytestmark = pytest.mark.slow

OTHER_CHANNEL = "C0SECOND"
# every proposition turn takes a minute: the debates run while the test looks at them
LONG_TURNS: dict[str, Any] = {**SCRIPT, "proposition": [{"say": "Cars out, people in.", "delay": 60}] * 4}


@pytest.fixture
async def api() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process, self.port = process, port
        self.url = f"http://127.0.0.1:{port}/slack/events"

    async def post(self, body: str, content_type: str) -> int:
        async with aiohttp.ClientSession() as http:
            for _ in range(1500):
                try:
                    headers = {**sign(body), "Content-Type": content_type}
                    async with http.post(self.url, data=body, headers=headers) as r:
                        return r.status
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.02)
        pytest.fail("the worker never listened")

    async def event(self, body: str) -> None:
        assert await self.post(body, "application/json") == 200

    async def click(self, user: str, card: dict[str, Any], action_id: str) -> None:
        payload = {
            "type": "block_actions",
            "trigger_id": f"T{os.urandom(6).hex()}",
            "team": {"id": TEAM, "domain": "rostra-test"},
            "user": {"id": user, "username": user.lower(), "team_id": TEAM},
            "api_app_id": "A0001",
            "token": "legacy",
            "actions": [{"type": "button", "action_id": action_id, "block_id": "rostra_card", "value": ""}],
            "message": card,
            "channel": {"id": card["channel"], "name": "debates"},
            "container": {"type": "message", "message_ts": card["ts"], "channel_id": card["channel"]},
        }
        body = urlencode({"payload": json.dumps(payload)})
        assert await self.post(body, "application/x-www-form-urlencoded") == 200


@pytest.fixture(params=["sqlite", "postgres"])
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'rostra.db'}"
        return
    yield request.getfixturevalue("postgres_url")


@pytest.fixture
def workers(
    request: pytest.FixtureRequest, tmp_path: Path, api: FakeSlack, storage_url: str
) -> Iterator[tuple[Worker, Worker]]:
    marker = request.node.get_closest_marker("worker_env")
    script = write_script(tmp_path, LONG_TURNS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "SLACK_", "ANTHROPIC_"))}
    env.update(
        ROSTRA_CONFIG=str(CONFIG_PATH),
        ROSTRA_STORAGE__URL=storage_url,
        ROSTRA_STORAGE__POLL_SECONDS="0.2",
        ROSTRA_MODEL__DEFAULT="scripted",
        ROSTRA_MODEL__SCRIPT=str(script),
        ROSTRA_MODEL__LATENCY="0",
        ROSTRA_LIMITS__USER_COOLDOWN="0",
        ROSTRA_SLACK__API_URL=api.base_url,
        ROSTRA_SLACK__EDIT_INTERVAL="0",
        ROSTRA_SLACK__POST_RESULTS="false",
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
    )
    env.update(marker.kwargs if marker is not None else {})
    started: list[Worker] = []
    log = tmp_path / "stderr.log"
    with log.open("a", encoding="utf-8") as errors:
        for _ in range(2):
            port = _free_port()
            process = subprocess.Popen(
                [sys.executable, "-m", "bot", "slack", "--http", "--host", "127.0.0.1", "--port", str(port)],
                cwd=REPO,
                env=env,
                text=True,
                stdout=subprocess.DEVNULL,
                stderr=errors,
            )
            started.append(Worker(process, port))
    try:
        yield started[0], started[1]
    finally:
        for worker in started:
            worker.process.kill()
            worker.process.wait(timeout=10)


def _ephemerals(api: FakeSlack, user: str) -> list[str]:
    return [e["text"] for e in api.ephemerals if e["user"] == user]


async def _told(api: FakeSlack, user: str, count: int) -> str:
    await api.wait_until(lambda: len(_ephemerals(api, user)) >= count, within=20)
    return _ephemerals(api, user)[count - 1]


def _buttons(card: dict[str, Any]) -> set[str]:
    return {e["action_id"] for b in card.get("blocks") or [] if b["type"] == "actions" for e in b["elements"]}


async def _running(api: FakeSlack, channel: str) -> dict[str, Any]:
    """The channel's opening card, once it carries its buttons (the debate runs)."""
    await api.wait_until(lambda: len(api.top_level(channel)) >= 1, within=30)
    await api.wait_until(lambda: "rostra_card_status" in _buttons(api.top_level(channel)[0]), within=30)
    card = dict(api.top_level(channel)[0])
    card["channel"] = channel
    return card


OWNER = (  # a debate's owner, once the debate is stored with its thread (its card's clicks find it)
    "SELECT d.owner FROM debates d JOIN bindings b ON b.debate_id = d.id AND b.key = 'thread_ts'"
    " WHERE d.topic = $1"
)


async def _owner_pid(storage_url: str, topic: str) -> int | None:
    """The pid of the worker running the debate on `topic` (from its lease in the store)."""
    if storage_url.startswith("sqlite"):
        with sqlite3.connect(storage_url.removeprefix("sqlite:///")) as db:
            row = db.execute(OWNER.replace("$1", "?"), (topic,)).fetchone()
        owner = row[0] if row is not None else None
    else:
        conn = await asyncpg.connect(storage_url)
        try:
            owner = await conn.fetchval(OWNER, topic)
        finally:
            await conn.close()
    return int(str(owner).split(":")[-2]) if owner else None


async def _the_other(workers: tuple[Worker, Worker], storage_url: str, topic: str) -> Worker:
    for _ in range(300):  # the card is posted just before the debate and its thread are stored
        owner = await _owner_pid(storage_url, topic)
        if owner is not None:
            break
        await asyncio.sleep(0.1)
    (other,) = [w for w in workers if w.process.pid != owner]
    return other


async def test_two_workers_start_once_and_answer_controls_from_either(
    api: FakeSlack, workers: tuple[Worker, Worker], storage_url: str
) -> None:
    first, second = workers
    topic = "Should cities ban cars?"
    body = json.dumps(envelope(mention_event(f"debate {topic}")))
    # the same signed delivery (a retry landing on the other worker, or a replay) reaches both
    await asyncio.gather(first.event(body), second.event(body))
    card = await _running(api, CHANNEL)
    await asyncio.sleep(1.0)  # time for a second start, if there were one
    assert len(api.top_level(CHANNEL)) == 1
    other = await _the_other(workers, storage_url, topic)

    # a second start in the busy channel, through the worker that does not run the debate
    await other.event(json.dumps(envelope(mention_event("debate Should trains be free?", user=BOB))))
    assert "A debate is already running here" in await _told(api, BOB, 1)
    assert len(api.top_level(CHANNEL)) == 1

    # the card's Status button through the other worker: the debate's status, not "ended"
    await other.click(BOB, card, "rostra_card_status")
    status = await _told(api, BOB, 2)
    assert f"*{topic}*" in status and "phase" in status

    # `stop` by its starter through the other worker ends it
    await other.event(json.dumps(envelope(mention_event("stop"))))
    said = await _told(api, ALICE, 1)
    assert said.startswith((f"Stopping the debate on *{topic}*", f"Asked the debate on *{topic}* to stop"))
    await api.wait_until(lambda: "rostra_card_status" not in _buttons(api.top_level(CHANNEL)[0]), within=30)

    # a debate in another channel: its card's Stop button through the worker that does not run it
    topic2 = "Should trains be free?"
    await first.event(json.dumps(envelope(mention_event(f"debate {topic2}", channel=OTHER_CHANNEL))))
    card2 = await _running(api, OTHER_CHANNEL)
    other2 = await _the_other(workers, storage_url, topic2)
    await other2.click(ALICE, card2, "rostra_card_stop")
    said = await _told(api, ALICE, 2)
    assert said.startswith((f"Stopping the debate on *{topic2}*", f"Asked the debate on *{topic2}* to stop"))
    await api.wait_until(
        lambda: "rostra_card_status" not in _buttons(api.top_level(OTHER_CHANNEL)[0]), within=30
    )
    # and now nothing runs there, whichever worker is asked
    await first.event(json.dumps(envelope(mention_event("status", channel=OTHER_CHANNEL))))
    assert (await _told(api, ALICE, 3)).startswith("No debate is running in this channel")


@pytest.mark.worker_env(ROSTRA_LIMITS__MAX_DEBATES_PER_SCOPE="3")
async def test_twenty_simultaneous_starts_over_two_workers_never_pass_the_cap(
    api: FakeSlack, workers: tuple[Worker, Worker]
) -> None:
    channels = [f"C0ROOM{i:02d}" for i in range(20)]
    bodies = [
        json.dumps(envelope(mention_event(f"debate Motion {i}?", user=f"U{i:04d}", channel=channel)))
        for i, channel in enumerate(channels)
    ]
    await asyncio.gather(*(workers[i % 2].event(body) for i, body in enumerate(bodies)))
    await api.wait_until(lambda: len(api.ephemerals) >= 17, within=30)  # every refusal said
    await asyncio.sleep(1.0)  # time for a fourth debate, if there were one
    assert sum(len(api.top_level(c)) for c in channels) == 3
    refusals = [e["text"] for e in api.ephemerals]
    assert len(refusals) == 17
    assert all("(the limit is 3)" in text for text in refusals)
