"""Store benchmark, run by hand: `.venv/bin/python bench/store.py`. Results go in docs/benchmarks.md.

Append throughput and p99 latency of the store (`Store.append`: fenced by the lease, seq-checked,
committed before it returns) on SQLite and on Postgres, one debate alone and many debates at once,
each next to the raw limit of the same database measured in the same run: one INSERT+COMMIT per
row, and rows batched 100 to a commit. Postgres runs on a temporary local server (testkit/postgres.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg

from core.events import Notice, dump_event
from core.ports import DebateRecord, Store
from core.settings import StorageSettings
from core.storage import open_store
from testkit.postgres import running_server

EVENTS = 2000
MANY = 16
BATCH = 100
MESSAGE = "x" * 300  # about the size of a streamed chunk's event


@dataclass
class Figure:
    label: str
    events: int
    seconds: float
    latencies: list[float]

    @property
    def rate(self) -> float:
        return self.events / self.seconds

    @property
    def p99_ms(self) -> float:
        if not self.latencies:
            return float("nan")
        return statistics.quantiles(self.latencies, n=100)[98] * 1000


def record(debate_id: str) -> DebateRecord:
    now = datetime.now(UTC)
    return DebateRecord(
        id=debate_id, format="arena", topic="t", spec={}, status="running", created_at=now, updated_at=now
    )


def payload(debate_id: str, seq: int) -> Notice:
    return Notice(debate_id=debate_id, seq=seq, level="info", code="bench", message=MESSAGE)


async def store_appends(store: Store, debates: int, label: str) -> Figure:
    ids = [f"{label}-{debates}-{i}" for i in range(debates)]
    for debate_id in ids:
        await store.create_debate(record(debate_id))
    latencies: list[float] = []
    per_debate = EVENTS // debates

    async def debate(debate_id: str) -> None:
        for seq in range(1, per_debate + 1):
            started = time.perf_counter()
            await store.append(payload(debate_id, seq))
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(debate(d) for d in ids))
    return Figure(label, per_debate * debates, time.perf_counter() - started, latencies)


def sqlite_raw(path: Path, batch: int) -> Figure:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE raw (debate_id TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (debate_id, seq))")
    text = dump_event(payload("raw", 1))
    latencies: list[float] = []
    started = time.perf_counter()
    for first in range(1, EVENTS + 1, batch):
        t = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO raw VALUES (?, ?, ?)", [("raw", seq, text) for seq in range(first, first + batch)]
        )
        conn.execute("COMMIT")
        latencies.append(time.perf_counter() - t)
    seconds = time.perf_counter() - started
    conn.close()
    return Figure(f"raw, {batch} per commit", EVENTS, seconds, latencies if batch == 1 else [])


async def postgres_raw(url: str, batch: int) -> Figure:
    conn = await asyncpg.connect(url)
    table = f"raw_{batch}"
    await conn.execute(
        f"CREATE TABLE {table} (debate_id TEXT, seq INTEGER, payload TEXT, PRIMARY KEY (debate_id, seq))"
    )
    text = dump_event(payload("raw", 1))
    latencies: list[float] = []
    started = time.perf_counter()
    for first in range(1, EVENTS + 1, batch):
        t = time.perf_counter()
        if batch == 1:
            await conn.execute(f"INSERT INTO {table} VALUES ($1, $2, $3)", "raw", first, text)
        else:
            async with conn.transaction():
                await conn.executemany(
                    f"INSERT INTO {table} VALUES ($1, $2, $3)",
                    [("raw", seq, text) for seq in range(first, first + batch)],
                )
        latencies.append(time.perf_counter() - t)
    seconds = time.perf_counter() - started
    await conn.close()
    return Figure(f"raw, {batch} per commit", EVENTS, seconds, latencies if batch == 1 else [])


def table(backend: str, raw_one: Figure, raw_batched: Figure, runs: list[Figure]) -> None:
    print(f"\n{backend}")
    print("| What | events/s | p99 per append | vs raw 1/commit | vs raw batched |")
    print("| --- | --- | --- | --- | --- |")
    for f in (raw_one, raw_batched, *runs):
        print(
            f"| {f.label} | {f.rate:,.0f} | {f.p99_ms:.2f} ms | {f.rate / raw_one.rate:.2f} |"
            f" {f.rate / raw_batched.rate:.2f} |"
        )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        raw_one = sqlite_raw(folder / "raw1.db", 1)
        raw_batched = sqlite_raw(folder / "raw100.db", BATCH)
        url = f"sqlite:///{folder / 'store.db'}"
        store = await open_store(url, StorageSettings(url=url))
        try:
            runs = [
                await store_appends(store, 1, "store, 1 debate"),
                await store_appends(store, MANY, f"store, {MANY} debates at once"),
            ]
        finally:
            await store.close()
        table("SQLite (WAL, synchronous=NORMAL, local disk)", raw_one, raw_batched, runs)

    with running_server() as server:
        url = server.new_database()
        raw_one = await postgres_raw(url, 1)
        raw_batched = await postgres_raw(url, BATCH)
        store = await open_store(url, StorageSettings(url=url))
        try:
            runs = [
                await store_appends(store, 1, "store, 1 debate"),
                await store_appends(store, MANY, f"store, {MANY} debates at once"),
            ]
        finally:
            await store.close()
        table("Postgres 15 (local server, fsync=off as in the tests)", raw_one, raw_batched, runs)


if __name__ == "__main__":
    asyncio.run(main())
