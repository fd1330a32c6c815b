"""Real `rostra slack --http` worker processes on one database, against the Web API fake: starting
them, sending them signed requests, and reading what the store and the channel show. Shared by the
many-worker tests."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import asyncpg
import pytest

from testkit.slack_api import TEAM, FakeSlack
from testkit.slack_world import BOT_TOKEN, SCRIPT, SIGNING_SECRET, sign
from tests.helpers import CONFIG_PATH, REPO

LONG_TURNS: dict[str, Any] = {**SCRIPT, "proposition": [{"say": "Cars out, people in.", "delay": 60}] * 4}
"""Every proposition turn takes a minute: the debates run while a test looks at them."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    def __init__(self, process: subprocess.Popen[str], port: int, log: Path) -> None:
        self.process, self.port, self.log = process, port, log
        self.url = f"http://127.0.0.1:{port}/slack/events"

    async def post(self, body: str, content_type: str, headers: dict[str, str] | None = None) -> int:
        return (await self.answer(body, content_type, headers))[0]

    async def answer(
        self, body: str, content_type: str, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """The HTTP status and the body the worker answered with (a modal's inline errors, say)."""
        async with aiohttp.ClientSession() as http:
            for _ in range(3000):  # a minute: a loaded machine starts a worker slowly
                try:
                    sent = {**sign(body), "Content-Type": content_type, **(headers or {})}
                    async with http.post(self.url, data=body, headers=sent) as r:
                        return r.status, await r.text()
                except aiohttp.ClientConnectionError:
                    if self.process.poll() is not None:
                        said = self.log.read_text(encoding="utf-8")[-2000:]
                        pytest.fail(
                            f"the worker exited ({self.process.returncode}) before it listened:\n{said}"
                        )
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

    async def ready(self) -> None:
        """Once it answers (Slack's URL check, which does nothing else)."""
        body = json.dumps({"token": "legacy", "challenge": "ready?", "type": "url_verification"})
        await self.event(body)

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no goodbye, no lease given back
        self.process.wait(timeout=30)


def worker_env(storage_url: str, script: Path, api: FakeSlack, extra: dict[str, str]) -> dict[str, str]:
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
    env.update(extra)
    return env


def rostra_slack(env: dict[str, str], log: Path, port: int) -> subprocess.Popen[str]:
    """`rostra slack --http` on a loopback port, its stderr appended to `log`."""
    with log.open("a", encoding="utf-8") as errors:
        return subprocess.Popen(
            [sys.executable, "-m", "bot", "slack", "--http", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO,
            env=env,
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )


def spawn(env: dict[str, str], log: Path) -> Worker:
    port = free_port()
    return Worker(rostra_slack(env, log, port), port, log)


@contextmanager
def running_workers(envs: list[dict[str, str]], log: Path) -> Iterator[list[Worker]]:
    """A worker process per environment, all writing to `log`; every one is killed at the end."""
    started: list[Worker] = []
    try:
        for env in envs:
            started.append(spawn(env, log))
        yield started
    finally:
        stop_all(started)


def stop_all(workers: list[Worker]) -> None:
    for worker in workers:
        if worker.process.poll() is None:
            worker.process.kill()
        worker.process.wait(timeout=10)


def ephemerals(api: FakeSlack, user: str) -> list[str]:
    return [e["text"] for e in api.ephemerals if e["user"] == user]


async def told(api: FakeSlack, user: str, count: int, within: float = 20) -> str:
    await api.wait_until(lambda: len(ephemerals(api, user)) >= count, within=within)
    return ephemerals(api, user)[count - 1]


def buttons(card: dict[str, Any]) -> set[str]:
    return {e["action_id"] for b in card.get("blocks") or [] if b["type"] == "actions" for e in b["elements"]}


async def running_card(api: FakeSlack, channel: str) -> dict[str, Any]:
    """The channel's opening card, once it carries its buttons (the debate runs)."""
    await api.wait_until(lambda: len(api.top_level(channel)) >= 1, within=30)
    await api.wait_until(lambda: "rostra_card_status" in buttons(api.top_level(channel)[0]), within=30)
    card = dict(api.top_level(channel)[0])
    card["channel"] = channel
    return card


async def quiet(api: FakeSlack, seconds: float = 1.0, within: float = 30.0) -> None:
    """Wait until no Web API call has reached the fake for `seconds`. A worker frozen (SIGSTOP) then
    has no request in hand: one frozen as it sent a call (the fence asked, the bytes not yet written)
    sends it as it wakes, and no process can take back a request it had begun."""
    await api.wait_until(lambda: bool(api.calls) and time.monotonic() - api.calls[-1].at >= seconds, within)


OWNER = (  # a debate's owner, once the debate is stored with its thread (its card's clicks find it)
    "SELECT d.owner FROM debates d JOIN bindings b ON b.debate_id = d.id AND b.key = 'thread_ts'"
    " WHERE d.topic = $1"
)


async def _value(storage_url: str, sql: str, topic: str) -> str | None:
    """One value the store holds for the debate on `topic` (`sql` selects it, `$1` the topic)."""
    if storage_url.startswith("sqlite"):
        with sqlite3.connect(storage_url.removeprefix("sqlite:///")) as db:
            row = db.execute(sql.replace("$1", "?"), (topic,)).fetchone()
        return str(row[0]) if row is not None and row[0] else None
    conn = await asyncpg.connect(storage_url)
    try:
        value = await conn.fetchval(sql, topic)
    finally:
        await conn.close()
    return str(value) if value else None


async def owner_of(storage_url: str, topic: str) -> str | None:
    """The owner id (`instance:pid:token`) of the debate on `topic`, from its lease in the store."""
    return await _value(storage_url, OWNER, topic)


async def status_of(storage_url: str, topic: str) -> str | None:
    """The stored status of the debate on `topic` ("running", "stopped", ...)."""
    return await _value(storage_url, "SELECT status FROM debates WHERE topic = $1", topic)


async def owner_pid(storage_url: str, topic: str) -> int | None:
    """The pid of the worker running the debate on `topic` (from its lease in the store)."""
    owner = await owner_of(storage_url, topic)
    return int(owner.split(":")[-2]) if owner else None


async def owner_and_other(workers: list[Worker], storage_url: str, topic: str) -> tuple[Worker, Worker]:
    """The worker running the debate on `topic`, and the other one."""
    for _ in range(300):  # the card is posted just before the debate and its thread are stored
        pid = await owner_pid(storage_url, topic)
        if pid is not None:
            break
        await asyncio.sleep(0.1)
    (owner,) = [w for w in workers if w.process.pid == pid]
    (other,) = [w for w in workers if w.process.pid != pid]
    return owner, other
