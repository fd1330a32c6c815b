"""Capacity sweep, run by hand: how many concurrent debates one process carries.

    .venv/bin/python bench/capacity.py                      # N = 1, 200, 500, 1000; 2 runs each
    .venv/bin/python bench/capacity.py -n 1 -n 1000 --runs 3
    .venv/bin/python bench/capacity.py -n 200 --gc default  # Python's own collector settings
    .venv/bin/python bench/capacity.py -n 200 --profile /tmp/200.prof  # one run under cProfile
    .venv/bin/python bench/capacity.py -n 1000 --store memory  # the engine alone, no store I/O

Each run is its own process: N arena debates started together (2 rounds x 3 exchanges unless
`--rounds` says otherwise, humans off, every role on the scripted model streaming a ~60-word turn in
~3 s), on the real clock, into a real SQLite file in a temporary directory. Each run reports its
wall time (first start to last close), event-loop lag (a sampler task asks to wake every 10 ms and
records how late it woke: p50/p99), the store's append latency (p99, timed by wrapping the store
object the manager holds), commits per second (SQLite's own trace of COMMIT statements on the
store's connections, when it can find them), RSS growth per debate (peak during the run over the RSS
before the first start) and CPU (user+sys over wall; 100 % is one core busy). The sweep then prints
the wall of each N against one debate.

Before the runs, the raw limits of the disk under the same temporary directory are measured: rows
per second with one INSERT+COMMIT each, and batched 100 rows to a commit, into a table shaped like
the event log (plain sqlite3, WAL, synchronous=NORMAL, as the store opens it).

Only the `Store` protocol (core/ports.py) and `Runtime` are relied on, so the bench keeps working
while the store's insides change: the append wrapper times whatever the manager's store is.
Results go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.config import Config, Secrets, load_config
from bot.runtime import Runtime
from core.events import DebateCompleted, Event
from core.llm.scripted import Script, ScriptedModel
from core.ports import (
    AdmissionAsk,
    BindingValues,
    ChannelClaim,
    Claimed,
    DebateRecord,
    DebateStatus,
    Refused,
    new_owner_id,
)
from core.spec import DebateSpec

REPO = Path(__file__).resolve().parent.parent
TOPIC = "Should cities ban cars?"
# Sixty words, spoken in 20 chunks of three words: at 0.15 s a chunk, about 3 s a turn.
TURN = (
    "The evidence from cities that tried it is consistent: fewer cars in the centre means safer"
    " streets, cleaner air and busier shops within two years. The objections are real but they are"
    " about the transition, not the destination, and a transition can be designed: buses first,"
    " deliveries at night, exemptions for disabled residents, and a clear date everyone can plan"
    " around."
)
CHUNK_LATENCY = 0.15
SIZES = (1, 200, 500, 1000)


# --- measuring inside one run --------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class TimedStore:
    """The manager's store, with every `append*` call timed (whatever the store is underneath)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.append_seconds: list[float] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name.startswith("append") and callable(value):
            value = self._timed(value)
            setattr(self, name, value)  # built once: the timing wrapper costs the run as little as it can
        return value

    def _timed(self, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await method(*args, **kwargs)
            finally:
                self.append_seconds.append(time.perf_counter() - start)

        return timed


def _connections(obj: Any, depth: int = 2) -> list[Any]:
    """aiosqlite connections reachable from the store object (for counting commits)."""
    import aiosqlite

    if isinstance(obj, aiosqlite.Connection):
        return [obj]
    if depth == 0:
        return []
    found: list[Any] = []
    values: list[Any] = []
    if isinstance(obj, list | tuple | set):
        values = list(obj)
    elif hasattr(obj, "__dict__"):
        values = list(vars(obj).values())
    for value in values:
        for conn in _connections(value, depth - 1):
            if all(conn is not c for c in found):
                found.append(conn)
    return found


class CommitCounter:
    """Counts COMMIT statements SQLite runs on the store's connections (its trace callback)."""

    def __init__(self) -> None:
        self.commits = 0
        self.connections = 0

    def __call__(self, statement: str) -> None:
        if statement.lstrip()[:6].upper() == "COMMIT":
            self.commits += 1  # called from the connection's thread; an int add is atomic enough

    async def attach(self, store: Any) -> None:
        for conn in _connections(store):
            await conn.set_trace_callback(self)
            self.connections += 1
        on_writer = getattr(store, "on_writer", None)
        if on_writer is not None:  # the SQLite store's writer connection, on its own thread
            await on_writer(lambda conn: conn.set_trace_callback(self))
            self.connections += 1


class MemoryStore:
    """The Store protocol in memory, no I/O: with `--store memory`, what the engine costs alone."""

    def __init__(self) -> None:
        self._debates: dict[str, DebateRecord] = {}
        self._events: dict[str, list[Event]] = {}
        self._bindings: dict[str, dict[str, str]] = {}
        self._calls: dict[str, dict[tuple[str, int], str]] = {}
        self._owner = new_owner_id()
        self._leases: set[str] = set()
        self._votes: dict[str, list[str]] = {}
        self._posted = asyncio.Event()

    @property
    def owner(self) -> str:
        return self._owner

    async def acquire(self, debate_id: str) -> bool:
        self._leases.add(debate_id)  # one process: every lease is free or ours
        return True

    async def release(self, debate_id: str) -> None:
        self._leases.discard(debate_id)

    async def still_held(self, debate_id: str) -> bool:
        return True  # one process: nobody else takes a debate

    def when_taken(self, debate_id: str, taken: Callable[[], None]) -> None:
        pass  # never taken

    async def post_vote(self, debate_id: str, payload: str) -> None:
        self._votes.setdefault(debate_id, []).append(payload)
        self._posted.set()

    async def take_votes(self, debate_id: str) -> list[str]:
        return self._votes.pop(debate_id, [])

    async def waiting_votes(self, debate_id: str) -> list[str]:
        return list(self._votes.get(debate_id, []))

    async def wait_for_votes(self) -> None:
        await self._posted.wait()
        self._posted.clear()

    # One process: the bench starts debates through the manager, not admission, so a start is
    # always admitted and nothing runs in another process.
    async def admit(self, ask: AdmissionAsk) -> Claimed | Refused:
        return Claimed(at=time.time(), previous_start=None)

    async def give_back(self, ask: AdmissionAsk, claimed: Claimed) -> None:
        return None

    async def find_running(self, platform: str, channel: str) -> DebateRecord | None:
        return None

    async def first_delivery(self, key: str, ttl: float) -> bool:
        return True

    async def forget_delivery(self, key: str) -> None:
        return None

    async def usage_in_scope(
        self, platform: str, scope: str, since: datetime, kinds: Sequence[str]
    ) -> list[Event]:
        return []  # the benchmark sets no daily budget

    async def join_workers(self, role: str) -> None:
        return None

    async def live_workers(self, role: str) -> int:
        return 1

    async def create_debate(
        self, record: DebateRecord, *, claim: ChannelClaim | None = None, values: BindingValues | None = None
    ) -> None:
        self._debates[record.id] = record
        self._bindings.setdefault(record.id, {}).update(values or {})

    async def append(self, event: Event) -> None:
        log = self._events.setdefault(event.debate_id, [])
        if event.seq != len(log) + 1:
            raise RuntimeError(f"event seq {event.seq} does not follow {len(log)}")
        log.append(event)

    async def events(self, debate_id: str) -> list[Event]:
        return list(self._events.get(debate_id, []))

    async def get_debate(self, debate_id: str) -> DebateRecord | None:
        return self._debates.get(debate_id)

    async def list_debates(self, limit: int = 20) -> list[DebateRecord]:
        return list(self._debates.values())[:limit]

    async def debates_with_status(self, status: DebateStatus) -> list[DebateRecord]:
        return [r for r in self._debates.values() if r.status == status]

    async def set_status(self, debate_id: str, status: DebateStatus, reason: str = "") -> None:
        record = self._debates[debate_id]
        self._debates[debate_id] = record.model_copy(update={"status": status, "reason": reason})

    async def set_binding_value(self, debate_id: str, key: str, value: str) -> None:
        self._bindings.setdefault(debate_id, {})[key] = value

    async def binding_values(self, debate_id: str) -> dict[str, str]:
        return dict(self._bindings.get(debate_id, {}))

    async def running_values(self, key: str, where: tuple[str, str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for debate_id, values in self._bindings.items():
            running = self._debates[debate_id].status == "running"
            if running and values.get(where[0]) == where[1] and key in values:
                counts[values[key]] = counts.get(values[key], 0) + 1
        return counts

    async def record_call(self, debate_id: str, key: str, n: int, payload: str) -> None:
        self._calls.setdefault(debate_id, {})[(key, n)] = payload

    async def calls(self, debate_id: str) -> dict[tuple[str, int], str]:
        return dict(self._calls.get(debate_id, {}))

    async def close(self) -> None:
        return None


class CountingSink:
    """A front end that shows nothing: counts events by kind, notes when each debate closes."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.closed = 0

    async def emit(self, event: Event) -> None:
        self.kinds[event.kind] += 1
        if isinstance(event, DebateCompleted):
            self.closed += 1


async def _sample(lags: list[float], rss: list[int], stop: asyncio.Event, interval: float = 0.01) -> None:
    loop = asyncio.get_running_loop()
    last_rss = 0.0
    while not stop.is_set():
        asked = loop.time()
        await asyncio.sleep(interval)
        woke = loop.time()
        lags.append(max(0.0, woke - asked - interval))
        if woke - last_rss >= 0.25:
            rss.append(_rss_bytes())
            last_rss = woke


def _config(db: Path, n: int) -> Config:
    return load_config(
        REPO / "config.yaml",
        overrides={
            "storage": {"url": f"sqlite:///{db}"},
            "model": {"default": "scripted", "roles": {}, "latency": CHUNK_LATENCY},
            "limits": {"max_concurrent_debates": max(20, n), "max_tokens_per_debate": 0},
        },
    )


async def one_run(
    n: int, gc_mode: str, tmp: Path, store_mode: str = "sqlite", pacing: str = "stream", rounds: int = 2
) -> dict[str, Any]:
    """N debates started together; the figures of this run."""
    ScriptedModel.paced_by_reader = pacing == "reader"
    config = _config(tmp / "capacity.db", n)
    script = Script({"proposition": [TURN], "opposition": [TURN]})
    options = {"rounds": rounds, "exchanges_per_round": 3, "humans": "off", "duration": 7200}
    spec = DebateSpec("arena", TOPIC, options)
    sink = CountingSink()
    async with Runtime(config, secrets=Secrets(), script=script) as rt:
        if gc_mode == "tuned":
            from bot.gctune import tune_gc

            tune_gc(config.runtime.gc)
        if store_mode == "memory":
            rt.manager.store = MemoryStore()
        timed = TimedStore(rt.manager.store)
        commits = CommitCounter()
        await commits.attach(rt.manager.store)
        rt.manager.store = timed
        lags: list[float] = []
        rss: list[int] = []
        stop = asyncio.Event()
        rss_before = _rss_bytes()
        sampler = asyncio.create_task(_sample(lags, rss, stop))
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        commits0 = commits.commits
        start = time.perf_counter()
        handles = await asyncio.gather(*(rt.start_debate(spec, sink, seed=i + 1) for i in range(n)))
        started = time.perf_counter() - start
        results = await asyncio.gather(*(h.wait() for h in handles))
        wall = time.perf_counter() - start
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        stop.set()
        await sampler
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    reasons = Counter(r.reason for r in results)
    appends = timed.append_seconds
    return {
        "n": n,
        "gc": gc_mode,
        "store": store_mode,
        "pacing": pacing,
        "wall": wall,
        "start_spread": started,
        "lag_p50_ms": _percentile(lags, 0.50) * 1000,
        "lag_p99_ms": _percentile(lags, 0.99) * 1000,
        "lag_max_ms": max(lags, default=0.0) * 1000,
        "append_p50_ms": _percentile(appends, 0.50) * 1000,
        "append_p99_ms": _percentile(appends, 0.99) * 1000,
        "appends": len(appends),
        "commits": commits.commits - commits0 if commits.connections else None,
        "commits_per_s": (commits.commits - commits0) / wall if commits.connections else None,
        "rss_per_debate_kb": (max(rss, default=rss_before) - rss_before) / n / 1024,
        "rss_peak_mb": max(rss, default=rss_before) / 2**20,
        "cpu_pct": 100 * cpu / wall,
        "events": sum(sink.kinds.values()),
        "deltas": sink.kinds["turn_delta"],
        "reasons": dict(reasons),
    }


# --- the disk's own limits -----------------------------------------------------------------------


def raw_sqlite_limits(tmp: Path, rows: int = 5000) -> dict[str, float]:
    """Rows/s into an event-shaped table: one INSERT+COMMIT per row, and 100 rows per commit."""
    payload = json.dumps({"kind": "turn_delta", "text": "x" * 40, "turn_id": "t1"})
    out: dict[str, float] = {}
    for label, batch in (("commit_each_rows_per_s", 1), ("batched_100_rows_per_s", 100)):
        path = tmp / f"raw-{batch}.db"
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(
            "CREATE TABLE events (debate_id TEXT, seq INTEGER, kind TEXT, at TEXT, payload TEXT,"
            " PRIMARY KEY (debate_id, seq)) WITHOUT ROWID"
        )
        start = time.perf_counter()
        for first in range(0, rows, batch):
            conn.execute("BEGIN")
            for seq in range(first, first + batch):
                conn.execute(
                    "INSERT INTO events VALUES (?,?,?,?,?)",
                    (f"d{seq % 997}", seq, "turn_delta", "2026-01-01T00:00:00+00:00", payload),
                )
            conn.execute("COMMIT")
        out[label] = rows / (time.perf_counter() - start)
        conn.close()
    return out


# --- the sweep -----------------------------------------------------------------------------------


def _run_child(n: int, gc_mode: str, store_mode: str, pacing: str, rounds: int, tmp: Path) -> dict[str, Any]:
    env = {**os.environ, "AGNO_TELEMETRY": "false"}
    env.pop("ANTHROPIC_API_KEY", None)
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            str(n),
            "--gc",
            gc_mode,
            "--store",
            store_mode,
            "--pacing",
            pacing,
            "--rounds",
            str(rounds),
            "--tmp",
            str(tmp),
        ],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _each(runs: list[dict[str, Any]], pick: Callable[[dict[str, Any]], float | None], spec: str) -> str:
    """One figure per run, in run order, as `a–b–c`."""
    values = [pick(r) for r in runs]
    return "–".join("n/a" if v is None else format(v, spec) for v in values)


def sweep(sizes: list[int], runs: int, gc_mode: str, store_mode: str, pacing: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory(dir=os.environ.get("CAPACITY_TMP")) as tmpdir:
        tmp = Path(tmpdir)
        raw = raw_sqlite_limits(tmp)
        print(
            f"disk under {tmp}: {raw['commit_each_rows_per_s']:,.0f} rows/s committing each row,"
            f" {raw['batched_100_rows_per_s']:,.0f} rows/s batched by 100",
            flush=True,
        )
        print(
            f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs;"
            f" gc: {gc_mode}; store: {store_mode}; pacing: {pacing}; rounds: {rounds}"
        )
        results: dict[int, list[dict[str, Any]]] = {}
        for n in sizes:
            for i in range(runs):
                run_dir = tmp / f"n{n}-r{i}"
                run_dir.mkdir()
                results.setdefault(n, []).append(_run_child(n, gc_mode, store_mode, pacing, rounds, run_dir))
                r = results[n][-1]
                print(f"  N={n} run {i + 1}: {json.dumps(r)}", flush=True)
        base = statistics.median(r["wall"] for r in results[sizes[0]]) if sizes[0] == 1 else None
        print()
        print(
            "| debates | wall (s) | wall vs one | loop lag p50 / p99 | append p99 | commits/s"
            " | RSS/debate | CPU |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for n, rs in results.items():
            ratio = _each(rs, lambda r: r["wall"] / base, ".2f") if base else "n/a"
            lag_p50 = statistics.median(r["lag_p50_ms"] for r in rs)
            print(
                f"| {n} | {_each(rs, lambda r: r['wall'], '.1f')} | {ratio}"
                f" | {lag_p50:.1f} / {_each(rs, lambda r: r['lag_p99_ms'], '.0f')} ms"
                f" | {_each(rs, lambda r: r['append_p99_ms'], '.1f')} ms"
                f" | {_each(rs, lambda r: r['commits_per_s'], ',.0f')}"
                f" | {_each(rs, lambda r: r['rss_per_debate_kb'], '.0f')} KB"
                f" | {_each(rs, lambda r: r['cpu_pct'], '.0f')} % |"
            )
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, action="append", help="concurrent debates (repeatable)")
    parser.add_argument("--runs", type=int, default=2, help="runs per N (default 2)")
    parser.add_argument(
        "--gc",
        choices=("tuned", "default"),
        default="tuned",
        help="runtime.gc from config.yaml, or Python's",
    )
    parser.add_argument(
        "--store",
        choices=("sqlite", "memory"),
        default="sqlite",
        help="the real SQLite store, or an in-memory one (the engine's cost without I/O)",
    )
    parser.add_argument(
        "--pacing",
        choices=("stream", "reader"),
        default="stream",
        help="the scripted model's chunks paced like a network stream (its own), or by the reader"
        " (its earlier pacing, for comparison)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="rounds per debate (default 2, so one vote: the arena votes after every round but the last)",
    )
    parser.add_argument(
        "--profile", type=Path, help="run one N in this process under cProfile; stats to this file"
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tmp", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        run = one_run(args.child, args.gc, args.tmp, args.store, args.pacing, args.rounds)
        print(json.dumps(asyncio.run(run)))
        return
    if args.profile is not None:
        import cProfile

        with tempfile.TemporaryDirectory() as tmp, cProfile.Profile() as profile:
            run = one_run((args.n or [200])[0], args.gc, Path(tmp), args.store, args.pacing, args.rounds)
            result = asyncio.run(run)
        profile.dump_stats(args.profile)
        print(json.dumps(result))
        return
    sweep(sorted(args.n or SIZES), args.runs, args.gc, args.store, args.pacing, args.rounds)


if __name__ == "__main__":
    main()
