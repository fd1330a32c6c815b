"""The database away for a while, as the tests of store outages make it: another process's long
write holding the tables locked, on SQLite and on Postgres."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import asyncpg

from tests.core.test_store_faults import hold_lock


async def database_away(storage_url: str, seconds: float, held: asyncio.Event) -> None:
    """Another process's long write: every table locked for `seconds` (SQLite's exclusive lock; on
    Postgres an exclusive lock on the debates table, which every worker's writes and reads need).
    `held` is set once the lock is taken."""
    if storage_url.startswith("sqlite"):
        flag = threading.Event()
        holding = asyncio.ensure_future(
            asyncio.to_thread(hold_lock, Path(storage_url.removeprefix("sqlite:///")), seconds, flag)
        )
        await asyncio.to_thread(flag.wait, 10)
        held.set()
        await holding
        return
    conn = await asyncpg.connect(storage_url)
    try:
        async with conn.transaction():
            await conn.execute("LOCK TABLE debates IN ACCESS EXCLUSIVE MODE")
            held.set()
            await asyncio.sleep(seconds)
    finally:
        await conn.close()
