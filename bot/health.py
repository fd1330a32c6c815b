"""Health and readiness: is the store writable, is the platform connected.

`/healthz` (liveness) fails when the store cannot be written: a process that cannot store events
cannot run debates, and a restart (or an operator) is what helps. `/readyz` also needs every
platform connection the process registered to be up.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Check:
    ok: bool
    detail: str = ""


def probe_sqlite(path: Path, timeout: float = 2.0) -> Check:
    """Open the database file anew and take its write lock, then let it go (writes nothing)."""
    if not path.exists():
        return Check(False, f"the database file {path} is gone")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=timeout, isolation_level=None)
    except sqlite3.Error as exc:
        return Check(False, f"cannot open {path} for writing: {exc}")
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        return Check(False, f"cannot write to {path}: {exc}")
    finally:
        conn.close()
    return Check(True, "writable")


class Health:
    def __init__(self, store: Any) -> None:
        self._store = store
        self.platforms: dict[str, Callable[[], bool]] = {}

    def add_platform(self, name: str, connected: Callable[[], bool]) -> None:
        """A front end says how to tell whether it is connected (for readiness)."""
        self.platforms[name] = connected

    async def store(self) -> Check:
        path = getattr(self._store, "path", None)
        if not isinstance(path, Path):
            return Check(True, "not checked for this store")
        return await asyncio.to_thread(probe_sqlite, path)

    async def live(self) -> dict[str, Check]:
        return {"store": await self.store()}

    async def ready(self) -> dict[str, Check]:
        checks = await self.live()
        for name, connected in self.platforms.items():
            try:
                up = bool(connected())
            except Exception as exc:  # a broken check reads as not connected
                up = False
                checks[name] = Check(False, f"check failed: {exc}")
                continue
            checks[name] = Check(up, "connected" if up else "not connected")
        return checks
