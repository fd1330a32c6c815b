"""The people's ballot on a vote card: seeded only while people may vote, closed to late reactions."""

from __future__ import annotations

from core.events import VoteCast
from tests.adapters.discord.conftest import World, card


async def test_reactions_after_the_vote_closed_count_for_nothing_and_the_card_says_so(world: World) -> None:
    await world.start(humans="vote")
    thread = world.thread()
    ballot = card(thread, "🗳️")
    assert {str(r.emoji) for r in ballot.reactions} == {"✅", "❌"}  # the window is open: seeded
    await world.env.advance_time(60)  # the window closes, the debate ends
    closed = card(thread, "🗳️")
    assert closed.embeds[0].footer.text == "Vote v1 · closed: reactions no longer count"
    before = await world.events()

    await world.bob.react(closed, "❌")

    after = await world.events()
    assert len(after) == len(before)
    assert not [e for e in after if isinstance(e, VoteCast) and e.voter.human]
