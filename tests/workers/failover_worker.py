"""A Rostra worker process for the failover test: a real runtime on a shared database whose front end
is a "thread" file (one JSON line per delivered event, appended atomically).

    python -m tests.workers.failover_worker THREAD_FILE NAME [--start SEED]

It takes over the debates of platform `worker` whose owner stopped renewing its lease, and with
`--start` begins one debate itself (printing its id). It runs until killed or sent SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from bot.config import Secrets, load_config
from bot.runtime import Runtime
from core.events import Event, dump_event, load_event
from core.ports import Binding, DebateRecord, EventSink
from core.spec import DebateSpec
from tests.helpers import CONFIG_PATH

TOPIC = "Should cities ban cars?"
OPTIONS = {"rounds": 2, "exchanges_per_round": 2, "first_speaker": "ada", "humans": "off"}


class ThreadFile:
    """What a channel would show: every event once, in order; a reattached thread catches up first."""

    def __init__(self, path: Path, worker: str) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._worker = worker

    async def emit(self, event: Event) -> None:
        line = json.dumps({"worker": self._worker, "event": json.loads(dump_event(event))}) + "\n"
        os.write(self._fd, line.encode())  # one write per line: whole lines even under SIGKILL


def shown(path: Path, debate_id: str) -> int:
    """The last seq the thread shows for the debate."""
    if not path.exists():
        return 0
    seqs = [
        json.loads(line)["event"]["seq"]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["event"]["debate_id"] == debate_id
    ]
    return max(seqs, default=0)


async def main(thread: Path, name: str, start: int | None) -> None:
    config = load_config(CONFIG_PATH)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with Runtime(config, secrets=Secrets()) as rt:
        rt.enable_failover()

        async def attach(record: DebateRecord, values: dict[str, str]) -> EventSink | None:
            sink = ThreadFile(thread, name)
            done = shown(thread, record.id)
            for event in await rt.store.events(record.id):  # stored but never shown: show them now
                if event.seq > done:
                    await sink.emit(load_event(dump_event(event)))
            return sink

        await rt.resume_debates("worker", attach)
        if start is not None:
            handle = await rt.start_debate(
                DebateSpec("arena", TOPIC, OPTIONS),
                ThreadFile(thread, name),
                binding=Binding(platform="worker", channel="thread-1"),
                seed=start,
            )
            print(handle.debate_id, flush=True)
        print("ready", flush=True)
        await stop.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("thread", type=Path)
    parser.add_argument("name")
    parser.add_argument("--start", type=int)
    args = parser.parse_args()
    asyncio.run(main(args.thread, args.name, args.start))
    sys.exit(0)
