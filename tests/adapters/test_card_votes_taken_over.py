"""A card ballot on a copy of a debate another process took over while this one was paused: it
still shows the card, and people's reactions may reach it as it wakes. The reaction itself goes to
the new owner, whose ballot knows the person's other reactions; the vote it would make here does
not (that ballot never saw the reaction, and a later removal through it would withdraw nothing).
Both backends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from adapters.card_votes import CardVotes
from tests.paused_copy import taken_over_while_paused


async def test_a_reaction_on_a_copy_taken_over_while_paused_goes_to_the_new_owner_as_a_reaction(
    tmp_path: Path, url: str
) -> None:
    async with taken_over_while_paused(tmp_path, url) as copy:
        card = CardVotes(copy.vote_id, ["keep", "replace"], copy.handle)
        await card.reaction("UBOB", "keep", added=True, name="bob", at=1700000000.5)
        left = [json.loads(p) for p in await copy.taker.waiting_votes(copy.handle.debate_id)]
        assert left == [
            {
                "kind": "reaction",
                "vote_id": copy.vote_id,
                "person": "UBOB",
                "key": "keep",
                "added": True,
                "at": 1700000000.5,
                "name": "bob",
            }
        ]
        assert card.ballot.choices() == {}  # not kept here: this copy is no longer the debate
        result = await asyncio.wait_for(copy.handle.wait(), 10)
        assert result.reason == "interrupted"  # the stale copy stopped, writing nothing
