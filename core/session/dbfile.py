"""The SQLite database file a process opened, watched for being deleted or replaced under it.

SQLite keeps writing to the file it opened even after that file was deleted or replaced (a restore,
a cleanup): every write then lands where no one will ever read it again. So the file's identity
(device and inode) as the debate found it when it started here is compared with what the path
holds now, at most once a heartbeat; a difference is a store outage like any other, waited out and
then given up on.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from core.errors import StoreError


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class DatabaseFile:
    """One SQLite database path and the file a debate found there when it started in this process."""

    def __init__(self, path: Path, every: float) -> None:
        self.path = path
        self._every = every
        self._checked = time.monotonic()
        self._expected = _identity(path)  # (st_dev, st_ino); None: no file to watch
        self.problem: str | None = None  # once found, it stays: the file this process wrote to is gone

    @classmethod
    def of(cls, url: str, every: float) -> DatabaseFile | None:
        """The file a `sqlite:///…` store URL names (None for other stores)."""
        if not url.startswith("sqlite:///"):
            return None
        from core.storage.sqlite import sqlite_path

        try:
            return cls(sqlite_path(url), every)
        except StoreError:
            return None

    def check(self, *, now: bool = False) -> str | None:
        """Why the database file is no longer the one this process opened (None: it still is).
        Looks at the file at most once per heartbeat unless `now`."""
        if self.problem is not None or self._expected is None:
            return self.problem
        moment = time.monotonic()
        if not now and moment - self._checked < self._every:
            return None
        self._checked = moment
        found = _identity(self.path)
        if found is None:
            self.problem = f"the database file {self.path} was deleted"
        elif found != self._expected:
            self.problem = f"the database file {self.path} was replaced"
        return self.problem
