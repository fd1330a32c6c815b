"""Failover on Postgres: two worker processes; the owner of a running debate is SIGKILLed, and the
other takes the debate over once its lease runs out, in the same thread, nothing lost or doubled."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import DebateCompleted, Notice, TurnCompleted, VoteCast, load_event
from core.spec import DebateSpec
from tests.helpers import REPO, RecordingSink, make_config
from tests.workers.failover_worker import OPTIONS, TOPIC

LEASE = 3.0
HEARTBEAT = 0.5


def worker(thread: Path, name: str, url: str, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(
        ROSTRA_STORAGE__URL=url,
        ROSTRA_STORAGE__LEASE_SECONDS=str(LEASE),
        ROSTRA_STORAGE__HEARTBEAT_SECONDS=str(HEARTBEAT),
        ROSTRA_MODEL__DEFAULT="scripted",
        ROSTRA_MODEL__LATENCY="0.15",
        ROSTRA_INSTANCE=f"machine-{name}",  # as on two machines: only the lease tells whether one lives
    )
    return subprocess.Popen(
        [sys.executable, "-m", "tests.workers.failover_worker", str(thread), name, *extra],
        cwd=REPO,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def lines_of(thread: Path) -> list[dict[str, Any]]:
    if not thread.exists():
        return []
    return [json.loads(line) for line in thread.read_text(encoding="utf-8").splitlines() if line.strip()]


async def uninterrupted_stats(tmp_path: Path) -> dict[str, Any]:
    config = make_config(tmp_path / "whole", model={"latency": 0.15})
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(DebateSpec("arena", TOPIC, OPTIONS), RecordingSink(), seed=7)
        result = await handle.wait()
    stats = result.stats.model_dump()
    stats.pop("debate_seconds"), stats.pop("paused_seconds")
    return stats


@pytest.mark.slow
async def test_a_killed_owner_s_debate_is_taken_over_within_the_lease(
    tmp_path: Path, postgres_url: str
) -> None:
    thread = tmp_path / "thread.jsonl"
    standby = worker(thread, "b", postgres_url)
    owner = worker(thread, "a", postgres_url, "--start", "7")
    try:
        assert owner.stdout is not None and standby.stdout is not None
        debate_id = owner.stdout.readline().strip()
        assert standby.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while sum(1 for line in lines_of(thread) if line["event"]["kind"] == "turn_completed") < 3:
            assert time.monotonic() < deadline, "the debate never got going"
            await asyncio.sleep(0.05)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        killed_at = time.monotonic()
        shown_by_a = len(lines_of(thread))

        taken_over: float | None = None
        deadline = time.monotonic() + 120
        while True:
            lines = lines_of(thread)
            if taken_over is None and any(line["worker"] == "b" for line in lines):
                taken_over = time.monotonic() - killed_at
            if lines and lines[-1]["event"]["kind"] == "debate_completed":
                break
            assert time.monotonic() < deadline, f"not finished: {len(lines)} lines"
            await asyncio.sleep(0.1)
    finally:
        for proc in (owner, standby):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)

    assert taken_over is not None
    # the lease runs out LEASE s after its last renewal; the standby looks every HEARTBEAT s
    assert taken_over <= LEASE + 2 * HEARTBEAT + 5.0, f"taken over after {taken_over:.1f} s"
    print(f"taken over {taken_over:.1f} s after the kill (lease {LEASE} s, heartbeat {HEARTBEAT} s)")

    lines = lines_of(thread)
    assert shown_by_a < len(lines) and lines[-1]["worker"] == "b"
    events = [load_event(json.dumps(line["event"])) for line in lines]
    assert {e.debate_id for e in events} == {debate_id}
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # every event shown once, in order

    from core.storage import open_store

    store = await open_store(postgres_url)
    try:
        stored = await store.events(debate_id)
        record = await store.get_debate(debate_id)
    finally:
        await store.close()
    assert stored == events  # the thread shows exactly the log
    assert record is not None and record.status == "completed" and record.owner == ""
    turns = [e.turn_id for e in stored if isinstance(e, TurnCompleted)]
    assert len(turns) == len(set(turns))
    votes = [(e.vote_id, e.voter.id) for e in stored if isinstance(e, VoteCast)]
    assert votes and len(votes) == len(set(votes))
    done = stored[-1]
    assert isinstance(done, DebateCompleted)
    [said] = [e for e in stored if isinstance(e, Notice)]
    assert said.code == "taken_over" and said.seq > shown_by_a  # the thread says what happened
    stats = done.stats.model_dump()
    stats.pop("debate_seconds"), stats.pop("paused_seconds")
    whole = await uninterrupted_stats(tmp_path)
    assert stats == {**whole, "notices": whole["notices"] + 1}  # the same debate, plus that notice
