"""`rostra demo` killed with SIGKILL again and again, then `rostra resume`: nothing lost or doubled.

Real processes on a real SQLite file, killed at random moments (some land mid-write); after each
kill the file must pass SQLite's integrity check with a gap-free log, and the finished debate must
match one that was never interrupted.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.events import DebateCompleted, TurnCompleted, load_event
from tests.helpers import REPO

ARGS = ["Should cities ban cars?", "--seed", "5", "--rounds", "2", "--exchanges", "2"]


def env_for(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(ROSTRA_STORAGE__URL=f"sqlite:///{db}", ROSTRA_CONFIG=str(REPO / "config.yaml"), COLUMNS="100")
    return env


def rostra(db: Path, log: Path, *args: str) -> subprocess.Popen[str]:
    with log.open("a", encoding="utf-8") as errors:
        return subprocess.Popen(
            [sys.executable, "-m", "bot", *args],
            cwd=REPO,
            env=env_for(db),
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )


def check(db: Path) -> tuple[str | None, str | None, list[Any]]:
    """Integrity, a gap-free log; the debate's id, status and events (if it got that far)."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        row = conn.execute("SELECT id, status FROM debates").fetchone()
        if row is None:
            return None, None, []
        seqs = [
            r[0] for r in conn.execute("SELECT seq FROM events WHERE debate_id = ? ORDER BY seq", (row[0],))
        ]
        assert seqs == list(range(1, len(seqs) + 1))
        events = [
            load_event(r[0])
            for r in conn.execute("SELECT payload FROM events WHERE debate_id = ? ORDER BY seq", (row[0],))
        ]
        return row[0], row[1], events
    finally:
        conn.close()


@pytest.mark.slow
def test_a_demo_killed_repeatedly_resumes_to_the_same_debate(tmp_path: Path) -> None:
    db = tmp_path / "rostra.db"
    log = tmp_path / "stderr.log"
    rng = random.Random(20261122)
    debate_id: str | None = None
    kills = 0
    while kills < 5:
        proc = rostra(db, log, "resume", debate_id) if debate_id else rostra(db, log, "demo", *ARGS)
        time.sleep(rng.uniform(1.5, 3.5))  # start-up takes about a second; then turns stream
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before it was killed: {log.read_text(encoding='utf-8')}")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        debate_id, status, events = check(db)
        if debate_id is not None:
            assert status == "running"  # a kill leaves no chance to say goodbye; resume handles it
            assert not any(isinstance(e, DebateCompleted) for e in events)

    assert debate_id is not None
    done = subprocess.run(
        [sys.executable, "-m", "bot", "resume", debate_id, "--fast"],
        cwd=REPO,
        env=env_for(db),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "resumed" in done.stdout and "Ended: all 2 rounds were played" in done.stdout
    _, status, events = check(db)
    assert status == "completed"

    whole_db = tmp_path / "whole.db"
    whole = subprocess.run(
        [sys.executable, "-m", "bot", "demo", *ARGS, "--fast"],
        cwd=REPO,
        env=env_for(whole_db),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert whole.returncode == 0, whole.stderr
    _, _, reference = check(whole_db)

    def said(log: list[Any]) -> list[tuple[str, str]]:
        return [(e.turn_id, e.text) for e in log if isinstance(e, TurnCompleted) and not e.interrupted]

    assert said(events) == said(reference)  # every completed turn exactly once, the same words
    resumed_stats = events[-1].stats.model_dump()
    reference_stats = reference[-1].stats.model_dump()
    for timing in ("debate_seconds", "paused_seconds"):  # paced runs count real seconds, --fast virtual
        assert abs(resumed_stats.pop(timing) - reference_stats.pop(timing)) < 3
    assert resumed_stats == reference_stats
