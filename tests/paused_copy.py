"""A debate whose process was paused past its lease (its heartbeat stopped) and taken over by
another process's store, in one test process: what the paused copy does with what reaches it is
then looked at. Used by the core's and the card ballot's tests, on both backends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import RealClock
from core.events import Event, HumanVoteOpened
from core.ports import Store
from core.session import DebateHandle
from core.settings import StorageSettings
from core.spec import DebateSpec
from core.storage import open_store
from tests.helpers import RecordingSink, make_config, write_script

LEASE, HEARTBEAT = 2.0, 0.5


@dataclass(frozen=True)
class PausedCopy:
    rt: Runtime  # the paused process
    handle: DebateHandle  # its copy of the debate, not done: it wrote nothing since
    vote_id: str  # the vote whose people's window is open in that copy
    taker: Store  # the store of the process that took the debate over


@asynccontextmanager
async def taken_over_while_paused(tmp_path: Path, url: str) -> AsyncIterator[PausedCopy]:
    observer = [{"vote": "keep", "reason": "Fine."}]
    script = {"proposition": ["P1."], "opposition": ["O1."], "observer": observer}
    config = make_config(
        tmp_path,
        storage={"url": url, "lease_seconds": LEASE, "heartbeat_seconds": HEARTBEAT},
        model={"script": str(write_script(tmp_path, script)), "latency": 0},
    )
    opened: list[HumanVoteOpened] = []
    sink = RecordingSink()

    def seen(event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            opened.append(event)

    sink.hooks.append(seen)
    settings = StorageSettings(url=url, lease_seconds=LEASE, heartbeat_seconds=HEARTBEAT)
    async with Runtime(config, clock=RealClock(), secrets=Secrets()) as rt:
        options = {"rounds": 2, "exchanges_per_round": 1, "humans": "vote", "human_window": 30}
        handle = await rt.start_debate(DebateSpec("arena", "Should cities ban cars?", options), sink)
        for _ in range(200):
            if opened:
                break
            await asyncio.sleep(0.05)
        assert opened, "the people's window never opened"
        paused: Any = rt.store
        paused._heartbeat_task.cancel()  # its lease is renewed no more, as in a paused process
        await asyncio.sleep(LEASE + HEARTBEAT)
        taker = await open_store(url, settings)
        try:
            assert await taker.acquire(handle.debate_id)  # the takeover
            assert not handle.done  # the paused copy has not noticed: it wrote nothing since
            yield PausedCopy(rt, handle, opened[0].vote_id, taker)
        finally:
            await taker.close()
