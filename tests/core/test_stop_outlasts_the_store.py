"""A Stop asked through a process that does not run the debate while the database is away waits for
it instead of being refused (it was lost so: the debate went on). Both backends, the database
locked by another process's long write; the asking process is a second store on the same database,
as another worker's is. The person is told once that it waits; past `storage.outage_limit` the Stop
is refused in words a person reads and nothing of it is stored."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import RealClock
from core.errors import StoreGaveUp, StoreUnavailable
from core.events import HumanVoteOpened
from core.outlasting import Waiting, span, stop_not_kept
from core.settings import StorageSettings
from core.spec import DebateSpec
from core.stopping import request_stop
from core.storage import open_store
from tests.database_away import database_away
from tests.helpers import RecordingSink, make_config, write_script

AWAY = 4.0  # seconds the database is locked
SCRIPT = {"observer": [{"vote": "keep", "reason": "Fine."}]}


async def _running(rt: Runtime, sink: RecordingSink) -> str:
    """A debate held open by its people's window; its id."""
    options = {"rounds": 2, "exchanges_per_round": 1, "humans": "vote", "human_window": 60}
    handle = await rt.start_debate(DebateSpec("arena", "Should cities ban cars?", options), sink)
    for _ in range(200):
        if any(isinstance(e, HumanVoteOpened) for e in sink.events):
            return handle.debate_id
        await asyncio.sleep(0.05)
    raise AssertionError("the people's window never opened")


@pytest.mark.parametrize(
    "outage_limit", [pytest.param(60.0, marks=pytest.mark.slow), 1.0], ids=["back in time", "away too long"]
)
async def test_a_stop_asked_elsewhere_while_the_database_is_away(
    tmp_path: Path, url: str, outage_limit: float
) -> None:
    config = make_config(
        tmp_path,
        storage={"url": url},
        model={"script": str(write_script(tmp_path, SCRIPT)), "latency": 0},
    )
    asking = StorageSettings(url=url, busy_timeout=0.5, outage_limit=outage_limit)
    told: list[float] = []
    async with Runtime(config, clock=RealClock(), secrets=Secrets()) as rt:
        rt.enable_failover()  # one of several processes: it applies what others leave for its debates
        debate_id = await _running(rt, RecordingSink())
        other = await open_store(url, asking)  # the worker the person reached
        try:
            held = asyncio.Event()
            away = asyncio.ensure_future(database_away(url, AWAY, held))
            await asyncio.wait_for(held.wait(), 10)
            began = time.monotonic()

            async def tell() -> None:
                told.append(time.monotonic() - began)

            stopping = request_stop({}, other, debate_id, "stopped by alice", 2.0, asking, Waiting(tell))
            if outage_limit < AWAY:
                with pytest.raises(StoreGaveUp):
                    await stopping
                await away
                assert await other.waiting_votes(debate_id) == []  # nothing of it stored
                still = rt.manager.get(debate_id)
                assert still is not None and not still.done  # and the debate goes on
            else:
                answer = await stopping
                assert time.monotonic() - began >= AWAY - 0.5  # it waited the database out
                assert answer in ("stopped", "requested")
                await away
                handle = rt.manager.get(debate_id)
                if handle is not None:
                    result = await asyncio.wait_for(handle.wait(), 30)
                    assert result.reason == "stopped"
                record = await other.get_debate(debate_id)
                assert record is not None and record.status == "stopped"
            assert len(told) == 1 and told[0] < AWAY  # told once, while it waited
        finally:
            await other.close()


def test_the_refusal_past_the_limit_says_how_long_in_words() -> None:
    limits = StorageSettings(outage_limit=120)
    assert "hasn't answered for 2 minutes" in stop_not_kept(limits)
    assert [span(s) for s in (1, 45, 60, 90, 600)] == [
        "1 second",
        "45 seconds",
        "1 minute",
        "90 seconds",
        "10 minutes",
    ]


async def test_a_stop_asked_where_the_debate_runs_while_the_database_is_away(
    tmp_path: Path, url: str
) -> None:
    """The worker running the debate, its lease gone unconfirmed while the database was away: the
    Stop (and Status) there must first confirm it still runs the debate. It was stopped at once,
    without asking, by each front end: so a copy another worker had taken over was "stopped" and
    the debate went on. Now the person is told it waits, as on any other worker, and Status says at
    once that it cannot tell (on the other worker it did; here it hung until the database was back)."""
    storage = {"url": url, "lease_seconds": 2.0, "heartbeat_seconds": 1.0, "busy_timeout": 0.5}
    config = make_config(
        tmp_path, storage=storage, model={"script": str(write_script(tmp_path, SCRIPT)), "latency": 0}
    )
    told: list[float] = []
    async with Runtime(config, clock=RealClock(), secrets=Secrets()) as rt:
        rt.enable_failover()
        debate_id = await _running(rt, RecordingSink())
        held = asyncio.Event()
        away = asyncio.ensure_future(database_away(url, AWAY, held))
        await asyncio.wait_for(held.wait(), 10)
        await asyncio.sleep(1.5)  # past what the lease is good for unconfirmed (lease less a heartbeat)
        began = time.monotonic()
        with pytest.raises(StoreUnavailable):
            await rt.manager.status_of(debate_id)
        assert time.monotonic() - began < 2.0  # answered at once, not when the database is back

        async def tell() -> None:
            told.append(time.monotonic() - began)

        answer = await rt.manager.request_stop(
            debate_id, "stopped by alice", wait=10.0, waiting=Waiting(tell)
        )
        assert answer == "stopped"
        assert len(told) == 1 and told[0] < AWAY - 1.5  # told while it waited, once
        await away
        record = await rt.store.get_debate(debate_id)
        assert record is not None and record.status == "stopped"
