"""A Rostra process that freezes itself (SIGSTOP) while it owns a debate, for the lease fence tests.

    python -m tests.workers.paused_owner debate SEQ   # a real debate, frozen once event SEQ is shown
    python -m tests.workers.paused_owner transaction  # frozen inside a store write, the row locked

The storage settings come from ROSTRA_STORAGE__* as for any Rostra process. It prints
`stopped DEBATE_ID` just before it stops itself; once continued (SIGCONT) it goes on as if nothing
happened and prints one JSON line saying how it ended.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from datetime import UTC, datetime
from typing import Any

from bot.config import Secrets, load_config
from bot.runtime import Runtime
from core.errors import StoreError
from core.events import Event, Notice
from core.ports import DebateRecord
from core.spec import DebateSpec
from core.storage import open_store
from tests.helpers import CONFIG_PATH

OPTIONS = {"rounds": 2, "exchanges_per_round": 2, "first_speaker": "ada", "humans": "off"}


def stop_here(debate_id: str) -> None:
    print(f"stopped {debate_id}", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)


class FreezingSink:
    """A front end that freezes the whole process once event `at` is shown (the store wrote it)."""

    def __init__(self, at: int) -> None:
        self.at = at

    async def emit(self, event: Event) -> None:
        if event.seq == self.at:
            stop_here(event.debate_id)


async def debate(at: int) -> dict[str, Any]:
    config = load_config(CONFIG_PATH)
    async with Runtime(config, secrets=Secrets()) as rt:
        handle = await rt.start_debate(DebateSpec("arena", "Tabs?", OPTIONS), FreezingSink(at), seed=5)
        result = await handle.wait()
        return {"reason": result.reason, "detail": result.detail}


async def transaction() -> dict[str, Any]:
    """Frozen with the debate's row locked by the store's own transaction (a write in flight)."""
    config = load_config(CONFIG_PATH)
    store: Any = await open_store(config.storage.url, config.storage)
    now = datetime.now(UTC)
    record = DebateRecord(
        id="frozen", format="arena", topic="t", spec={}, status="running", created_at=now, updated_at=now
    )
    try:
        await store.create_debate(record)
        await store.append(Notice(debate_id="frozen", seq=1, level="info", code="x", message="one"))

        async def locked_then_frozen(conn: Any) -> None:
            await store._fence(conn, "frozen")  # the row is locked until this transaction ends
            stop_here("frozen")

        outcomes = []
        try:
            await store._write(locked_then_frozen)
            outcomes.append("committed")
        except StoreError as exc:
            outcomes.append(type(exc).__name__)
        for seq in (2, 3):  # the debate goes on, as a session would after a store pause
            try:
                late = Notice(debate_id="frozen", seq=seq, level="info", code="x", message="late")
                await store.append(late)
                outcomes.append("appended")
            except StoreError as exc:
                outcomes.append(type(exc).__name__)
        return {"outcomes": outcomes}
    finally:
        await store.close()


if __name__ == "__main__":
    ended = asyncio.run(debate(int(sys.argv[2])) if sys.argv[1] == "debate" else transaction())
    print(json.dumps(ended), flush=True)
