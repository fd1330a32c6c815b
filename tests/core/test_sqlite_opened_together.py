"""Several workers started at the same moment on one new SQLite file: each opens it. The switch to
WAL mode can answer "database is locked" without SQLite's busy handler being asked (a worker of a
real two-worker test exited with it); the setup is tried again within `storage.busy_timeout`.

Threads with their own connections stand in for the processes: SQLite's file locks between
connections are the same either way, and threads start together far more reliably."""

from __future__ import annotations

import threading
from pathlib import Path

from core.settings import StorageSettings
from core.storage.sqlite_file import connect_writer


def test_workers_opening_one_new_file_at_the_same_moment_all_get_it(tmp_path: Path) -> None:
    failures: list[BaseException] = []
    for attempt in range(40):
        path = tmp_path / f"rostra-{attempt}.db"
        together = threading.Barrier(6)

        def open_it(path: Path = path, together: threading.Barrier = together) -> None:
            together.wait()
            try:
                connect_writer(path, StorageSettings()).close()
            except BaseException as exc:
                failures.append(exc)

        workers = [threading.Thread(target=open_it) for _ in range(6)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert failures == []
