"""Rostra's database away for 30 s in the middle of a Discord debate (another process holding the
SQLite file's exclusive lock), as people in the thread see it: the debate pauses, nothing is shown
that is not stored, and once the database answers again every turn is shown once and complete, the
thread says how long it paused, and the debate ends as it would have. The lease runs out while the
database is away (nobody can renew it), so the sink must not take its own silence for a takeover."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from core.events import DebateCompleted, TurnCompleted
from core.recovery import TAKEN_OVER
from testkit.discord_world import arena
from tests.core.test_store_faults import hold_lock

pytestmark = pytest.mark.slow

OUTAGE = 30.0
CURSOR = "▌"
PACED: dict[str, Any] = {
    "proposition": [{"say": f"Proposition, turn {i}: streets for people.", "delay": 0.5} for i in range(4)],
    "opposition": [{"say": f"Opposition, turn {i}: people need to work.", "delay": 0.5} for i in range(4)],
    "observer": [{"vote": "keep", "reason": "Clear and on topic."}],
    "moderator": ["Both sides made their case."],
}
STORAGE = {
    "lease_seconds": 6.0,  # runs out four times over while the database is away
    "heartbeat_seconds": 1.0,
    "busy_timeout": 0.1,
    "retry_initial": 0.05,
    "retry_max": 1.0,
    "outage_limit": 120.0,
}


async def test_a_30_s_database_outage_pauses_the_thread_and_loses_nothing(tmp_path: Path) -> None:
    async with arena(tmp_path, script=PACED, storage=STORAGE, discord={"edit_interval": 0.2}) as world:
        api = world.lb.api
        ran = await world.start()

        def texts() -> list[str]:
            return [str(m["content"] or "") for m in api.in_channel(ran.thread.id)]

        await api.wait_until(lambda: any("turn 0" in t and CURSOR not in t for t in texts()), within=30)
        held = threading.Event()
        outage = asyncio.ensure_future(asyncio.to_thread(hold_lock, tmp_path / "rostra.db", OUTAGE, held))
        await asyncio.to_thread(held.wait, 10)
        shown_before = len(api.requests)
        await outage  # the lock given back after OUTAGE seconds
        await asyncio.wait_for(ran.handle.wait(), 60)
        await ran.sink.finish()

        events = await world.rt.store.events(ran.handle.debate_id)
        assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "max_rounds"
        assert len(api.requests) > shown_before  # the thread went on after the outage
        shown = texts()
        for turn in [e for e in events if isinstance(e, TurnCompleted)]:  # not lost, not doubled
            assert sum(turn.text in text for text in shown) == 1, (turn.text, shown)
        assert not any(CURSOR in text for text in shown)
        (paused,) = [t for t in shown if "database was unavailable" in t]
        waited = re.search(r"Paused for (\d+) s", paused)
        assert waited is not None and int(waited[1]) >= OUTAGE - 5, paused
        assert not any(TAKEN_OVER in t or "stopped answering" in t for t in shown)
