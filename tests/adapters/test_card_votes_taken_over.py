"""A card ballot on a copy of a debate another process took over while this one was paused: it
still shows the card, and people's reactions may reach it as it wakes. The reaction itself goes to
the new owner, whose ballot knows the person's other reactions; the vote it would make here does
not (that ballot never saw the reaction, and a later removal through it would withdraw nothing).
Both backends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from adapters.card_votes import CardVotes
from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import RealClock
from core.events import Event, HumanVoteOpened
from core.settings import StorageSettings
from core.spec import DebateSpec
from core.storage import open_store
from tests.helpers import RecordingSink, make_config, write_script

LEASE, HEARTBEAT = 2.0, 0.5


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    return str(request.getfixturevalue("postgres_url"))


async def test_a_reaction_on_a_copy_taken_over_while_paused_goes_to_the_new_owner_as_a_reaction(
    tmp_path: Path, url: str
) -> None:
    script = {
        "proposition": ["P1."],
        "opposition": ["O1."],
        "observer": [{"vote": "keep", "reason": "Fine."}],
    }
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
        vote_id = opened[0].vote_id
        card = CardVotes(vote_id, ["keep", "replace"], handle)
        paused: Any = rt.store
        paused._heartbeat_task.cancel()  # its lease is renewed no more, as in a paused process
        await asyncio.sleep(LEASE + HEARTBEAT)
        other = await open_store(url, settings)
        try:
            assert await other.acquire(handle.debate_id)  # the takeover
            assert not handle.done  # the paused copy has not noticed: it wrote nothing since
            await card.reaction("UBOB", "keep", added=True, name="bob", at=1700000000.5)
            left = [json.loads(p) for p in await other.waiting_votes(handle.debate_id)]
            assert left == [
                {
                    "kind": "reaction",
                    "vote_id": vote_id,
                    "person": "UBOB",
                    "key": "keep",
                    "added": True,
                    "at": 1700000000.5,
                    "name": "bob",
                }
            ]
            assert card.ballot.choices() == {}  # not kept here: this copy is no longer the debate
            result = await asyncio.wait_for(handle.wait(), 10)
            assert result.reason == "interrupted"  # the stale copy stopped, writing nothing
        finally:
            await other.close()
