"""Many workers, one bot: two real worker processes on one database (SQLite file and Postgres) give
every answer the same, whichever receives the request. Each worker is
tests/workers/cluster_worker.py, driven one JSON request at a time."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from core.errors import TOO_MANY_DEBATES
from core.events import DebateCompleted
from core.settings import StorageSettings
from core.storage import open_store
from tests.helpers import CONFIG_PATH, REPO

LEASE = 6.0
HEARTBEAT = 1.0
CAP = 5
PER_SCOPE = 3
TOPIC = "Tabs or spaces?"


class Worker:
    """One worker process; `ask` sends a request and returns its answer."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.owner = ""

    async def line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        text = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), timeout=120)
        assert text, "the worker exited"
        answer: dict[str, Any] = json.loads(text)
        assert "error" not in answer, answer["error"]
        return answer

    async def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        return await self.line()


@pytest.fixture
async def workers(url: str) -> AsyncIterator[Callable[[], Awaitable[Worker]]]:
    started: list[Worker] = []

    async def start() -> Worker:
        worker = Worker(spawn(url, f"machine-{len(started)}"))
        started.append(worker)
        worker.owner = (await worker.line())["ready"]
        return worker

    yield start
    for worker in started:
        proc = worker.proc
        assert proc.stdin is not None and proc.stdout is not None
        if proc.poll() is None:
            proc.stdin.close()  # the worker's signal to stop
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if not pipe.closed:
                pipe.close()


def spawn(url: str, instance: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(
        ROSTRA_CONFIG=str(CONFIG_PATH),
        ROSTRA_STORAGE__URL=url,
        ROSTRA_STORAGE__LEASE_SECONDS=str(LEASE),
        ROSTRA_STORAGE__HEARTBEAT_SECONDS=str(HEARTBEAT),
        ROSTRA_STORAGE__POLL_SECONDS="0.2",
        ROSTRA_LIMITS__MAX_CONCURRENT_DEBATES=str(CAP),
        ROSTRA_LIMITS__MAX_DEBATES_PER_SCOPE=str(PER_SCOPE),
        ROSTRA_LIMITS__USER_COOLDOWN="600",
        ROSTRA_MODEL__DEFAULT="scripted",
        ROSTRA_MODEL__LATENCY="1.0",  # the debates run for minutes: they are running when asked about
        ROSTRA_INSTANCE=instance,  # as on two machines: only the leases tell who lives
    )
    return subprocess.Popen(
        [sys.executable, "-m", "tests.workers.cluster_worker", "slack"],
        cwd=REPO,
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


async def running_in(url: str, channel: str | None = None) -> list[str]:
    """The running debates the database holds (in one channel), as any process would read them."""
    store = await open_store(url, StorageSettings(url=url))
    try:
        records = await store.debates_with_status("running")
        return [r.id for r in records if channel is None or r.binding.channel == channel]
    finally:
        await store.close()


async def test_a_second_start_in_a_busy_channel_is_refused_from_the_other_worker(
    url: str, workers: Callable[[], Awaitable[Worker]]
) -> None:
    a, b = await workers(), await workers()
    assert await a.ask("admit", scope="T1", channel="C1", user="U1") == {"claimed": "C1"}
    pending = await b.ask("admit", scope="T1", channel="C1", user="U2")
    assert pending == {"refused": "A debate is being started in this channel right now; wait a moment."}
    debate_id = (await a.ask("start", channel="C1", topic=TOPIC))["debate_id"]
    busy = await b.ask("admit", scope="T1", channel="C1", user="U2")
    here = f"A debate is already running here ({TOPIC!r}); stop it first or start one in another channel."
    assert busy == {"refused": here}
    assert await b.ask("find", channel="C1") == {"debate_id": debate_id}
    # started in a thread of its channel (as on Discord): found by either, from either worker
    await b.ask("admit", scope="T1", channel="C2", user="U2")
    threaded = (await b.ask("start", channel="C2", thread="C2-thread"))["debate_id"]
    for channel in ("C2", "C2-thread"):
        assert await a.ask("find", channel=channel) == {"debate_id": threaded}
    assert "refused" in await a.ask("admit", scope="T1", channel="C2", user="U3")
    assert await running_in(url, "C1") == [debate_id]


async def test_caps_and_cooldown_are_counted_across_workers(
    url: str, workers: Callable[[], Awaitable[Worker]]
) -> None:
    a, b = await workers(), await workers()
    for worker, channel, user in ((a, "C1", "U1"), (b, "C2", "U2"), (a, "C3", "U3")):
        assert "claimed" in await worker.ask("admit", scope="T1", channel=channel, user=user)
        await worker.ask("start", channel=channel)
    full = await b.ask("admit", scope="T1", channel="C4", user="U4")
    assert full == {
        "refused": f"This server already has {PER_SCOPE} debates running (the limit is {PER_SCOPE});"
        " try again when one ends."
    }
    cooling = await b.ask("admit", scope="T2", channel="C5", user="U1")  # U1 started one through `a`
    assert cooling["refused"].startswith("You started a debate moments ago; try again in ")
    assert "claimed" in await b.ask("admit", scope="T2", channel="C5", user="U5")  # others may
    await b.ask("release", channel="C5")  # a failed start gives the cooldown back
    assert "claimed" in await a.ask("admit", scope="T2", channel="C5", user="U5")
    assert len(await running_in(url)) == 3


async def test_twenty_simultaneous_starts_split_over_two_workers_never_pass_the_cap(
    url: str, workers: Callable[[], Awaitable[Worker]]
) -> None:
    a, b = await workers(), await workers()
    asks = [{"scope": f"T{i}", "channel": f"C{i}", "user": f"U{i}"} for i in range(20)]
    for worker, share in ((a, asks[0::2]), (b, asks[1::2])):  # both sent before either answers
        assert worker.proc.stdin is not None
        worker.proc.stdin.write(json.dumps({"op": "burst", "asks": share}) + "\n")
        worker.proc.stdin.flush()
    outcomes = (await a.line())["outcomes"] + (await b.line())["outcomes"]
    started = [o["debate_id"] for o in outcomes if "debate_id" in o]
    refused = {o["refused"] for o in outcomes if "refused" in o}
    assert 1 <= len(started) <= CAP
    assert len(started) + sum("refused" in o for o in outcomes) == 20
    assert refused <= {TOO_MANY_DEBATES}
    assert sorted(await running_in(url)) == sorted(started)


async def test_a_redelivered_event_is_handled_once(workers: Callable[[], Awaitable[Worker]]) -> None:
    """The same event (a Slack retry landing on the other worker, or a replay) reaches both at once."""
    a, b = await workers(), await workers()
    for n in range(10):
        key = f"slack:T1:event:Ev{n}"
        for worker in (a, b):
            assert worker.proc.stdin is not None
            worker.proc.stdin.write(json.dumps({"op": "first", "key": key}) + "\n")
            worker.proc.stdin.flush()
        answers = [(await a.line())["first"], (await b.line())["first"]]
        assert sorted(answers) == [False, True], key
    assert await b.ask("first", key="slack:T1:event:Ev0") == {"first": False}


async def test_stop_and_status_from_the_worker_that_does_not_run_the_debate(
    url: str, workers: Callable[[], Awaitable[Worker]]
) -> None:
    a, b = await workers(), await workers()
    await a.ask("admit", scope="T1", channel="C1", user="U1")
    debate_id = (await a.ask("start", channel="C1", topic=TOPIC))["debate_id"]
    status = (await b.ask("status", debate_id=debate_id))["status"]
    assert status is not None and status["topic"] == TOPIC
    assert await b.ask("stop", debate_id=debate_id) == {"answer": "stopped"}
    assert await running_in(url) == []
    assert await a.ask("status", debate_id=debate_id) == {"status": None}
    assert await b.ask("stop", debate_id=debate_id) == {"answer": "already_ended"}
    assert await b.ask("stop", debate_id="nosuch") == {"answer": "no_such_debate"}
    assert await a.ask("find", channel="C1") == {"debate_id": None}
    assert "claimed" in await b.ask("admit", scope="T1", channel="C1", user="U2")  # the channel is free


@pytest.mark.slow
async def test_a_worker_killed_while_it_held_a_claim_and_a_debate(
    url: str, workers: Callable[[], Awaitable[Worker]]
) -> None:
    """SIGKILL: its pending claim lapses (the channel frees itself), its running debate is taken over
    by the other worker, which answers for it; nothing is lost or doubled. The live workers (how the
    platforms' budgets are split) count one fewer."""
    a, b = await workers(), await workers()
    for worker in (a, b):
        await worker.ask("join", role="slack")
    assert await b.ask("live", role="slack") == {"live": 2}
    await a.ask("admit", scope="T1", channel="C1", user="U1")
    running = (await a.ask("start", channel="C1", topic=TOPIC))["debate_id"]
    await a.ask("admit", scope="T1", channel="C2", user="U2")  # a start in flight when it dies
    a.proc.send_signal(signal.SIGKILL)
    a.proc.wait(timeout=60)

    deadline = time.monotonic() + 120
    while True:  # refused while the dead worker's claim lasts, then claimed once
        answer = await b.ask("admit", scope="T1", channel="C2", user="U3")
        if "claimed" in answer:
            break
        assert answer == {"refused": "A debate is being started in this channel right now; wait a moment."}
        assert time.monotonic() < deadline, "the dead worker's claim never lapsed"
        await asyncio.sleep(0.5)
    started = (await b.ask("start", channel="C2"))["debate_id"]
    assert await b.ask("live", role="slack") == {"live": 1}  # its row lapsed with its claim

    store = await open_store(url, StorageSettings(url=url))
    try:
        while True:  # the dead worker's debate is taken over by the live one
            record = await store.get_debate(running)
            assert record is not None and record.status == "running"
            if record.owner == b.owner:
                break
            assert time.monotonic() < deadline, "the dead worker's debate was never taken over"
            await asyncio.sleep(0.5)
    finally:
        await store.close()
    assert await b.ask("find", channel="C1") == {"debate_id": running}
    assert sorted(await running_in(url)) == sorted([running, started])
    assert await b.ask("stop", debate_id=running) == {"answer": "stopped"}
    assert await running_in(url) == [started]


@pytest.mark.slow
async def test_a_stop_asked_while_its_owner_lies_dead_is_applied_by_the_worker_that_takes_over(
    url: str, workers: Callable[[], Awaitable[Worker]]
) -> None:
    """The Stop is stored while the debate's owner is SIGKILLed; the worker that takes the debate over
    applies it: the debate ends once, stopped, its log whole."""
    a, b = await workers(), await workers()
    await a.ask("admit", scope="T1", channel="C1", user="U1")
    debate_id = (await a.ask("start", channel="C1", topic=TOPIC))["debate_id"]
    a.proc.send_signal(signal.SIGKILL)
    a.proc.wait(timeout=60)
    assert await b.ask("stop", debate_id=debate_id) == {"answer": "stopped"}  # waits for the takeover
    store = await open_store(url, StorageSettings(url=url))
    try:
        record = await store.get_debate(debate_id)
        events = await store.events(debate_id)
    finally:
        await store.close()
    assert record is not None and (record.status, record.owner) == ("stopped", "")
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    ends = [e for e in events if isinstance(e, DebateCompleted)]
    assert len(ends) == 1 and ends[0].reason == "stopped" and ends[0] is events[-1]
    assert await b.ask("find", channel="C1") == {"debate_id": None}
