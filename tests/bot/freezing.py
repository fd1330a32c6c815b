"""Freezing a worker process (SIGSTOP) for the tests where another worker takes its debates over.

SQLite's write lock lives in the file: a process frozen inside a write transaction holds it until
it wakes, and no other process can write meanwhile, so none can take its debates over (Postgres
ends such a transaction after half a lease: core/storage/postgres_db.py; README, "Many processes,
one database"). A test that means "the owner paused between writes" freezes it again if the pause
fell inside one, rather than fail now and then on the lock (a CI run did: the takeover never came).
"""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

TRIES = 100


def freeze(process: subprocess.Popen[str], storage_url: str) -> None:
    """Stop the process (every thread of it), at a moment it holds no SQLite write lock."""
    for _ in range(TRIES):
        process.send_signal(signal.SIGSTOP)
        _wait_stopped(process.pid)
        if not storage_url.startswith("sqlite") or not _write_locked(storage_url.removeprefix("sqlite:///")):
            return
        process.send_signal(signal.SIGCONT)
        time.sleep(0.01)
    raise AssertionError(f"the worker held the database's write lock at each of {TRIES} pauses")


def wake(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGCONT)


@contextlib.contextmanager
def frozen(process: subprocess.Popen[str], storage_url: str) -> Iterator[None]:
    """The process frozen (between database writes) for the block, woken after it."""
    freeze(process, storage_url)
    try:
        yield
    finally:
        wake(process)


def _wait_stopped(pid: int) -> None:
    """Until every thread of the process is stopped: a signal is delivered, not obeyed at once."""
    deadline = time.monotonic() + 5
    while True:
        states = [_state(stat) for stat in Path(f"/proc/{pid}/task").glob("*/stat")]
        if all(state in "tT" for state in states if state):
            return
        assert time.monotonic() < deadline, f"process {pid} did not stop: {states}"
        time.sleep(0.005)


def _state(stat: Path) -> str:
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):  # the thread ended meanwhile
        return ""


def _write_locked(path: str) -> bool:
    """Whether some process holds the file's write lock (a write of ours would wait)."""
    conn = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        conn.close()
