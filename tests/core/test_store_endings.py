"""A store outage during a debate's last write: the notice that the debate paused is never stored
after `debate_completed` (nothing follows a debate's end)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import DebateCompleted, Event, TurnCompleted
from core.spec import DebateSpec
from core.storage.sqlite import SQLiteStore
from tests.core.test_store_faults import disk_full, fault_config
from tests.helpers import RecordingSink


async def test_an_outage_on_the_last_write_leaves_debate_completed_last(tmp_path: Path) -> None:
    config = fault_config(tmp_path, outage_limit=30.0)
    sink = RecordingSink()
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        store = rt.store
        assert isinstance(store, SQLiteStore)

        async def space_back_soon() -> None:
            await asyncio.sleep(0.4)
            await disk_full(store, False)

        async def fill_before_the_end(event: Event) -> None:  # the summary is the last before the end
            if isinstance(event, TurnCompleted) and event.role == "moderator":
                await disk_full(store, True)
                asyncio.get_running_loop().create_task(space_back_soon())

        sink.hooks.append(fill_before_the_end)
        handle = await rt.start_debate(DebateSpec("arena", "Should cities ban cars?", {"rounds": 1}), sink)
        result = await asyncio.wait_for(handle.wait(), 30)
        stored = await store.events(handle.debate_id)
    assert result.reason == "max_rounds"
    assert isinstance(stored[-1], DebateCompleted)
    assert isinstance(sink.events[-1], DebateCompleted)
