"""Benchmarks, run by hand: `.venv/bin/python bench/engine.py`. Results go in docs/benchmarks.md.

Measures what a person would feel: how long the fast demo takes end to end, how fast the engine
turns out a long debate (scripted model, fake clock, real SQLite), how quickly the store appends,
whether a turn's prompt stays flat as the debate grows, and peak memory.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import Notice, TurnCompleted
from core.ports import DebateRecord
from core.spec import DebateSpec
from core.storage.sqlite import SQLiteStore
from testkit.config import REPO, make_config
from testkit.recording import RecordingSink

DEMO_ARGS = ["Should cities ban cars?", "--fast", "--seed", "7", "--duration", "60"]


def fast_demo(runs: int = 5) -> list[float]:
    times = []
    env = {**os.environ, "AGNO_TELEMETRY": "false"}
    env.pop("ANTHROPIC_API_KEY", None)
    with tempfile.TemporaryDirectory() as tmp:
        env["ROSTRA_STORAGE__URL"] = f"sqlite:///{tmp}/bench.db"
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "bot", "demo", *DEMO_ARGS],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
            )
            times.append(time.perf_counter() - start)
    return times


async def long_debate() -> tuple[float, int, list[int]]:
    with tempfile.TemporaryDirectory() as tmp:
        config = make_config(
            Path(tmp), model={"latency": 0.02}, limits={"max_rounds": 40, "max_tokens_per_debate": 0}
        )
        sink = RecordingSink()
        async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
            start = time.perf_counter()
            handle = await rt.start_debate(
                DebateSpec("arena", "Should cities ban cars?", {"duration": 7200, "humans": "off"}),
                sink,
                seed=3,
            )
            await handle.wait()
            elapsed = time.perf_counter() - start
    inputs = [e.usage.input_tokens for e in sink.of(TurnCompleted) if e.role != "moderator"]
    return elapsed, len(sink.events), inputs


async def store_appends(n: int = 5000) -> float:
    from datetime import UTC, datetime

    with tempfile.TemporaryDirectory() as tmp:
        store = await SQLiteStore.open(Path(tmp) / "s.db")
        now = datetime.now(UTC)
        await store.create_debate(
            DebateRecord(
                id="b", format="arena", topic="t", spec={}, status="running", created_at=now, updated_at=now
            )
        )
        start = time.perf_counter()
        for seq in range(1, n + 1):
            await store.append(Notice(debate_id="b", seq=seq, level="info", code="x", message="m" * 80))
        elapsed = time.perf_counter() - start
        await store.close()
    return elapsed / n


def main() -> None:
    demo = fast_demo()
    runs = ", ".join(f"{t:.2f}" for t in demo)
    print(f"rostra demo --fast --seed 7: median {statistics.median(demo):.2f} s (runs: {runs})")
    elapsed, events, inputs = asyncio.run(long_debate())
    rate = events / elapsed
    print(f"40-round arena, {len(inputs)} turns, {events} events: {elapsed:.2f} s ({rate:,.0f} events/s)")
    print(
        f"prompt input tokens per turn: turns 7-12 max {max(inputs[6:12])}, last 20 max {max(inputs[-20:])}"
    )
    per = asyncio.run(store_appends())
    print(f"store append (commit each): {per * 1000:.3f} ms/event")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
