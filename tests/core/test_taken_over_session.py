"""A process paused past its lease may wake with its copy of a debate still open: it has written
nothing since, so nothing has told it that another process took the debate over. What people do
through it then must reach the new owner: a person's vote is passed on through the store, a Stop is
left there (and not answered as done), and the stale copy stops. Both backends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import RealClock
from core.events import HumanVoteOpened
from core.settings import StorageSettings
from core.spec import DebateSpec
from core.storage import open_store
from tests.helpers import RecordingSink, make_config, write_script
from tests.paused_copy import HEARTBEAT, LEASE, taken_over_while_paused


async def test_what_people_do_through_a_copy_taken_over_while_paused_reaches_the_new_owner(
    tmp_path: Path, url: str
) -> None:
    async with taken_over_while_paused(tmp_path, url) as copy:
        handle, vote_id = copy.handle, copy.vote_id
        await handle.cast_human_vote(vote_id, "42", "keep", voter_name="alice")
        answer = await copy.rt.manager.request_stop(handle.debate_id, "stopped by alice", wait=0.5)
        assert answer == "requested"  # not "stopped": the debate goes on elsewhere until its owner stops it
        left = [json.loads(p) for p in await copy.taker.waiting_votes(handle.debate_id)]
        assert left == [
            {"vote_id": vote_id, "voter_id": "42", "choice": "keep", "voter_name": "alice"},
            {"control": "stop", "reason": "stopped by alice"},
        ]
        result = await asyncio.wait_for(handle.wait(), 10)
        assert result.reason == "interrupted"  # the stale copy stopped, writing nothing


async def test_a_copy_taken_over_while_paused_stops_at_its_first_heartbeat_when_it_wakes(
    tmp_path: Path, url: str
) -> None:
    """Woken, the paused process's heartbeat finds the lease taken: the stale copy stops there,
    within a heartbeat, not when it next writes or is asked (a people's window would have kept it
    open, its timers running, for the window's whole length)."""
    config = make_config(
        tmp_path,
        storage={"url": url, "lease_seconds": LEASE, "heartbeat_seconds": HEARTBEAT},
        model={"script": str(write_script(tmp_path, {"observer": [{"vote": "keep"}]})), "latency": 0},
    )
    sink = RecordingSink()
    settings = StorageSettings(url=url, lease_seconds=LEASE, heartbeat_seconds=HEARTBEAT)
    async with Runtime(config, clock=RealClock(), secrets=Secrets()) as rt:
        options = {"rounds": 2, "exchanges_per_round": 1, "humans": "vote", "human_window": 60}
        handle = await rt.start_debate(DebateSpec("arena", "Should cities ban cars?", options), sink)
        for _ in range(200):
            if any(isinstance(e, HumanVoteOpened) for e in sink.events):
                break
            await asyncio.sleep(0.05)
        paused: Any = rt.store
        paused._heartbeat_task.cancel()  # frozen: its lease is renewed no more
        await asyncio.sleep(LEASE + HEARTBEAT)
        other = await open_store(url, settings)
        try:
            assert await other.acquire(handle.debate_id)  # the takeover
            written = len(await other.events(handle.debate_id))
            leases = paused._leases  # woken: its heartbeat beats again
            paused._heartbeat_task = asyncio.create_task(leases.heartbeat(HEARTBEAT, leases._renew))
            result = await asyncio.wait_for(handle.wait(), HEARTBEAT * 4)
            assert result.reason == "interrupted"
            assert len(await other.events(handle.debate_id)) == written  # the stale copy wrote nothing
        finally:
            await other.close()
