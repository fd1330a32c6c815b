"""Cluster benchmark, run by hand: `.venv/bin/python bench/cluster.py [DEBATES_PER_WORKER]`.
Results go in docs/benchmarks.md.

Three Rostra worker processes (real runtimes, scripted models) on one real Postgres
(testkit/postgres.py). Debates are spread over many workspaces (three channels each, a cap of two per
workspace); every start request is delivered to two workers picked at random, as a platform's retry
landing elsewhere would be. One worker is SIGKILLed mid-run; the others take its debates over.
Reported: debates per worker, events/s, append p99, takeover time, and the counts that must be 0:
lost events (a gap in a debate's stored events, or a debate that never finished), duplicated
messages (a start delivered twice that opened two debates) and cap violations (more debates at once
in a workspace than its cap). Also the cluster's wall time against one debate alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

THIS = Path(__file__).resolve()
REPO = THIS.parent.parent
sys.path.insert(0, str(REPO))

WORKERS = 3
PER_SCOPE_CAP = 2
CHANNELS_PER_SCOPE = 3
LEASE, HEARTBEAT = 6.0, 2.0
STATUS = "SELECT status FROM debates WHERE id = $1"
RUNNING = "SELECT COUNT(*) FROM debates WHERE status = 'running'"
SPANS = (
    "SELECT d.id, d.scope, d.channel, d.status, COUNT(e.seq) AS n, COALESCE(MAX(e.seq), 0) AS top,"
    " MIN(e.at) AS first_at, MAX(e.at) AS last_at"
    " FROM debates d LEFT JOIN events e ON e.debate_id = d.id WHERE d.scope <> 'solo' GROUP BY d.id"
)
OPTIONS = {"rounds": 3, "exchanges_per_round": 2, "first_speaker": "ada", "humans": "off"}


# --- a worker process ----------------------------------------------------------------------------


class Quiet:
    """A front end that shows nothing (the store holds what happened)."""

    async def emit(self, event: Any) -> None:
        return None


async def worker_main() -> None:
    from bot.config import Secrets, load_config
    from bot.runtime import Runtime
    from core.errors import DebateError
    from core.ports import Binding, DebateRecord, EventSink
    from core.spec import DebateSpec

    config = load_config(REPO / "config.yaml")
    latencies: list[float] = []
    async with Runtime(config, secrets=Secrets()) as rt:
        rt.enable_failover()
        await rt.join_workers("bench")
        store = rt.store
        append = store.append

        async def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return await append(*args, **kwargs)
            finally:
                latencies.append(time.perf_counter() - began)

        store.append = timed  # type: ignore[method-assign]

        async def attach(record: DebateRecord, values: dict[str, str]) -> EventSink | None:
            return Quiet()

        await rt.resume_debates("bench", attach)

        async def start(req: dict[str, Any]) -> dict[str, Any]:
            if not await store.first_delivery(req["key"], 600):
                return {"repeat": True}
            try:
                claim = await rt.admission.admit(
                    platform="bench", scope=req["scope"], channel=req["channel"], user=req["user"]
                )
            except DebateError as exc:
                return {"refused": str(exc)}
            async with claim:
                binding = Binding(
                    platform="bench", scope=req["scope"], channel=req["channel"], started_by=req["user"]
                )
                handle = await rt.start_debate(  # as the front ends do: under the claim
                    DebateSpec("arena", req["topic"], OPTIONS), Quiet(), binding=binding, claim=claim.key
                )
                claim.started()
            return {"debate_id": handle.debate_id}

        async def answer(req: dict[str, Any]) -> None:
            try:
                if req["op"] == "start":
                    out = await start(req)
                else:
                    out = {"latencies": latencies}
            except Exception as exc:
                out = {"error": f"{type(exc).__name__}: {exc}"}
            print(json.dumps({"id": req["id"], **out}), flush=True)

        print(json.dumps({"ready": store.owner}), flush=True)
        tasks: set[asyncio.Task[None]] = set()
        while line := await asyncio.to_thread(sys.stdin.readline):
            task = asyncio.create_task(answer(json.loads(line)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)


# --- the driver ----------------------------------------------------------------------------------


class Proc:
    def __init__(self, process: asyncio.subprocess.Process, index: int) -> None:
        self.process, self.index = process, index
        self.pid = process.pid
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader: asyncio.Task[None] | None = None
        self.alive = True

    async def ready(self) -> None:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        assert b"ready" in line, line
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            while line := await self.process.stdout.readline():
                got = json.loads(line)
                future = self.waiting.pop(got["id"], None)
                if future is not None and not future.done():
                    future.set_result(got)
        finally:  # a worker gone (or a line it could not send): nobody waits for it for ever
            for future in self.waiting.values():
                if not future.done():
                    future.set_result({"lost": True, "latencies": []})

    async def ask(self, req: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[req["id"]] = future
        self.process.stdin.write((json.dumps(req) + "\n").encode())
        await self.process.stdin.drain()
        return await future


async def spawn(url: str, index: int, log: Path) -> Proc:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "ANTHROPIC_"))}
    env.update(
        ROSTRA_STORAGE__URL=url,
        ROSTRA_STORAGE__LEASE_SECONDS=str(LEASE),
        ROSTRA_STORAGE__HEARTBEAT_SECONDS=str(HEARTBEAT),
        ROSTRA_STORAGE__POLL_SECONDS="0.5",
        ROSTRA_MODEL__DEFAULT="scripted",
        ROSTRA_MODEL__LATENCY="0.05",
        ROSTRA_LIMITS__USER_COOLDOWN="0",
        ROSTRA_LIMITS__MAX_DEBATES_PER_SCOPE=str(PER_SCOPE_CAP),
        ROSTRA_LIMITS__MAX_CONCURRENT_DEBATES="1000",
        ROSTRA_INSTANCE=f"bench-{index}",
    )
    errors = log.open("a", encoding="utf-8")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(THIS),
        "--worker",
        cwd=REPO,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=errors,
        limit=2**26,  # a worker's append latencies come back on one line
    )
    proc = Proc(process, index)
    await proc.ready()
    return proc


def _at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


async def run(per_worker: int) -> None:
    import asyncpg

    from testkit.postgres import running_server

    ids = iter(range(10**9))
    with running_server() as server, tempfile.TemporaryDirectory() as tmp:
        url = server.new_database()
        log = Path(tmp) / "workers.log"
        procs = [await spawn(url, i, log) for i in range(WORKERS)]
        db = await asyncpg.connect(url)
        try:
            # one debate alone: the yardstick
            began = time.monotonic()
            alone = await procs[0].ask(
                {
                    "op": "start",
                    "id": next(ids),
                    "key": "alone",
                    "scope": "solo",
                    "channel": "solo",
                    "user": "u",
                    "topic": "Alone?",
                }
            )
            while await db.fetchval(STATUS, alone["debate_id"]) == "running":  # noqa: ASYNC110
                await asyncio.sleep(0.1)
            one_debate = time.monotonic() - began

            debates_wanted = per_worker * WORKERS
            scopes = -(-debates_wanted // PER_SCOPE_CAP)
            asks = [
                {
                    "op": "start",
                    "key": f"start:{s}:{c}",
                    "scope": f"w{s}",
                    "channel": f"w{s}-c{c}",
                    "user": f"u{s}-{c}",
                    "topic": f"Motion {s}.{c}",
                }
                for s in range(scopes)
                for c in range(CHANNELS_PER_SCOPE)
            ]
            random.shuffle(asks)
            began, began_wall = time.monotonic(), time.time()

            async def deliver(ask: dict[str, Any]) -> list[dict[str, Any]]:
                twice = random.sample([p for p in procs if p.alive], 2)  # a retry lands elsewhere
                got = await asyncio.gather(*(p.ask({**ask, "id": next(ids)}) for p in twice))
                return [{**answer, "worker": p.index} for answer, p in zip(got, twice, strict=True)]

            answers = await asyncio.gather(*(deliver(a) for a in asks))
            started = time.monotonic() - began
            # SIGKILL one worker mid-run
            await asyncio.sleep(max(1.0, one_debate * 0.3))
            victim = procs[-1]
            victim.alive = False
            victim.process.send_signal(signal.SIGKILL)
            killed_at = time.time()
            owner_of = {p.pid: p.index for p in procs}
            held_ids = [
                r["id"]
                for r in await db.fetch(
                    "SELECT id FROM debates WHERE status = 'running' AND owner LIKE $1", f"%:{victim.pid}:%"
                )
            ]
            held = len(held_ids)
            takeover = None
            new_owners: list[Any] = []
            while takeover is None and time.time() - killed_at < 120:
                left = await db.fetchval(
                    "SELECT COUNT(*) FROM debates WHERE status = 'running' AND owner LIKE $1",
                    f"%:{victim.pid}:%",
                )
                if left == 0:
                    takeover = time.time() - killed_at
                    new_owners = await db.fetch("SELECT owner FROM debates WHERE id = ANY($1)", held_ids)
                await asyncio.sleep(0.1)
            deadline = time.monotonic() + 600
            while await db.fetchval(RUNNING) and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.5)
            cluster_wall = time.monotonic() - began
            untouched_end = await db.fetchval(
                "SELECT MAX(updated_at) FROM debates WHERE scope <> 'solo' AND NOT (id = ANY($1))", held_ids
            )
            latencies: list[float] = []
            for p in procs[:-1]:
                latencies += (await p.ask({"op": "latencies", "id": next(ids)}))["latencies"]
            rows = await db.fetch(SPANS)
        finally:
            await db.close()
            for p in procs:
                if p.alive and p.process.stdin is not None:
                    p.process.stdin.close()
            for p in procs:
                try:
                    await asyncio.wait_for(p.process.wait(), 30)
                except TimeoutError:
                    p.process.kill()

    per_channel: dict[str, int] = defaultdict(int)
    by_worker: dict[int, int] = defaultdict(int)  # started there, plus taken over from the killed one
    for pair in answers:
        for answer in pair:
            if "debate_id" in answer:
                by_worker[answer["worker"]] += 1
    taken: dict[int, int] = defaultdict(int)
    for row in new_owners:
        pid = int(row["owner"].split(":")[-2]) if row["owner"] else -1
        taken[owner_of.get(pid, -1)] += 1
    for row in rows:
        per_channel[row["channel"]] += 1
    duplicated = sum(n - 1 for n in per_channel.values() if n > 1)
    lost = sum(r["top"] - r["n"] for r in rows) + sum(1 for r in rows if r["status"] == "running")
    # cap violations: more debates of a workspace at once (their event spans overlapping) than the cap
    spans: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for r in rows:
        if r["first_at"] is not None:
            spans[r["scope"]] += [(_at(r["first_at"]), 1), (_at(r["last_at"]), -1)]
    violations = 0
    for marks in spans.values():
        live = 0
        for _, step in sorted(marks, key=lambda m: (m[0], m[1])):
            live += step
            violations += live > PER_SCOPE_CAP
    events = sum(r["n"] for r in rows)
    untouched = _at(untouched_end) - began_wall
    refused = sum(1 for pair in answers for a in pair if "refused" in a)
    repeats = sum(1 for pair in answers for a in pair if "repeat" in a)
    p99 = statistics.quantiles(latencies, n=100)[98] * 1000 if len(latencies) > 100 else float("nan")
    print(
        f"workers: {WORKERS} on one Postgres; {len(rows)} debates"
        f" over {len({r['scope'] for r in rows})} workspaces"
        f" (cap {PER_SCOPE_CAP} per workspace, {CHANNELS_PER_SCOPE} channels asked in each)"
    )
    print(
        f"start requests: {len(asks)}, each delivered to 2 workers: {repeats} dropped as repeats,"
        f" {refused} refused (cap), all answered in {started:.1f} s"
    )
    print(
        "debates per worker: "
        + ", ".join(
            f"worker {i}: {by_worker[i]} started"
            + (" (SIGKILLed)" if i == WORKERS - 1 else f" + {taken[i]} taken over")
            for i in range(WORKERS)
        )
    )
    print(
        f"debates the killed worker held: {held};"
        f" takeover: {'never' if takeover is None else f'{takeover:.2f}'} s"
        f" (lease {LEASE:g} s + heartbeat {HEARTBEAT:g} s = {LEASE + HEARTBEAT:g} s)"
    )
    print(
        f"events: {events}, {events / cluster_wall:.0f} events/s; append p99 {p99:.1f} ms (surviving workers)"
    )
    print(
        f"one debate alone: {one_debate:.1f} s; the whole cluster run: {cluster_wall:.1f} s"
        f" ({cluster_wall / one_debate:.2f}x); without the debates taken over:"
        f" {untouched:.1f} s ({untouched / one_debate:.2f}x)"
    )
    print(f"lost events: {lost}; duplicated messages: {duplicated}; cap violations: {violations}")


if __name__ == "__main__":
    if "--worker" in sys.argv:
        asyncio.run(worker_main())
    else:
        asyncio.run(run(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
