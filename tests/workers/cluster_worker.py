"""A Rostra worker process for the many-workers tests: a real runtime on a shared database, driven
by one JSON request per line on stdin, answering one JSON line each on stdout.

    python -m tests.workers.cluster_worker PLATFORM

Requests (`op`): `admit` (platform, scope, channel, user: a start claimed, or refused with the
person's message), `start` (an admitted channel's debate started, long-running), `release`,
`burst` (many admits at once, started or refused), `find`, `stop`, `status`, `first` (an inbound
key), `join` and `live` (workers of a role). The storage and limits come from ROSTRA_* as for any
Rostra process. It takes over debates of PLATFORM whose owner died, and runs until stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from bot.config import Secrets, load_config
from bot.runtime import Runtime
from core.admission import Claim
from core.errors import AdmissionError
from core.events import Event
from core.ports import Binding, DebateRecord, EventSink
from core.spec import DebateSpec
from tests.helpers import CONFIG_PATH

LONG = {"rounds": 12, "exchanges_per_round": 4, "first_speaker": "ada", "humans": "off"}


class Quiet:
    """A front end that shows nothing (the store holds what happened)."""

    async def emit(self, event: Event) -> None:
        return None


class Worker:
    def __init__(self, rt: Runtime, platform: str) -> None:
        self.rt = rt
        self.platform = platform
        self.claims: dict[str, Claim] = {}
        self.asks: dict[str, dict[str, Any]] = {}

    async def admit(self, req: dict[str, Any]) -> dict[str, Any]:
        try:
            claim = await self.rt.admission.admit(
                platform=self.platform, scope=req["scope"], channel=req["channel"], user=req["user"]
            )
        except AdmissionError as exc:
            return {"refused": str(exc)}
        self.claims[req["channel"]] = claim
        self.asks[req["channel"]] = req
        return {"claimed": req["channel"]}

    async def start(self, req: dict[str, Any]) -> dict[str, Any]:
        claim = self.claims.pop(req["channel"])
        ask = self.asks.pop(req["channel"])
        async with claim:
            binding = Binding(
                platform=self.platform,
                scope=ask["scope"],
                channel=req.get("thread", ask["channel"]),
                started_by=ask["user"],
            )
            handle = await self.rt.start_debate(
                DebateSpec("arena", req.get("topic", "Tabs or spaces?"), LONG),
                Quiet(),
                binding=binding,
                claim=claim.key,
            )
            claim.started()
        return {"debate_id": handle.debate_id}

    async def burst(self, req: dict[str, Any]) -> dict[str, Any]:
        async def one(ask: dict[str, Any]) -> dict[str, Any]:
            got = await self.admit(ask)
            if "refused" in got:
                return got
            return await self.start({"channel": ask["channel"]})

        return {"outcomes": await asyncio.gather(*(one(a) for a in req["asks"]))}

    async def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req["op"]
        manager = self.rt.manager
        if op == "admit":
            return await self.admit(req)
        if op == "start":
            return await self.start(req)
        if op == "release":
            await self.claims.pop(req["channel"]).release()
            return {}
        if op == "burst":
            return await self.burst(req)
        if op == "find":
            found = await manager.find_running(platform=self.platform, channel=req["channel"])
            return {"debate_id": None if found is None else found.id}
        if op == "stop":
            return {"answer": await manager.request_stop(req["debate_id"], "stopped by a person", wait=60)}
        if op == "status":
            view = await manager.status_of(req["debate_id"])
            return {"status": None if view is None else {"topic": view.topic, "phase": view.phase}}
        if op == "first":
            return {"first": await self.rt.store.first_delivery(req["key"], req.get("ttl", 600))}
        if op == "join":
            await self.rt.store.join_workers(req["role"])
            return {}
        if op == "live":
            return {"live": await self.rt.store.live_workers(req["role"])}
        raise ValueError(op)


async def main(platform: str) -> None:
    config = load_config(CONFIG_PATH)
    async with Runtime(config, secrets=Secrets()) as rt:
        rt.enable_failover()

        async def attach(record: DebateRecord, values: dict[str, str]) -> EventSink | None:
            return Quiet()

        await rt.resume_debates(platform, attach)
        worker = Worker(rt, platform)
        print(json.dumps({"ready": rt.store.owner}), flush=True)
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                return
            req = json.loads(line)
            try:
                answer = await worker.handle(req)
            except Exception as exc:  # the test shows what went wrong
                answer = {"error": f"{type(exc).__name__}: {exc}"}
            print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
