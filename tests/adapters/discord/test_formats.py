"""Every format renders through the same cards: the panel's files in and out, Oxford's audience."""

from __future__ import annotations

import pytest

from core.events import Artifact, DebateCompleted, Verdict, VotingClosed
from tests.adapters.discord.conftest import SCRIPT, World, card, cards

NOTES = [
    ("transit.md", b"# Transit\nBuses carry more people per lane than cars ever will.\n"),
    ("retail.md", b"# Retail\nShops on car-free streets saw footfall rise in the first year.\n"),
    ("budget.md", b"# Budget\nRoad upkeep costs the city more than it collects in parking fees.\n"),
]


async def test_a_panel_reads_attached_documents_and_posts_its_file(world: World) -> None:
    files = {f"document{i}": note for i, note in enumerate(NOTES, 1)}

    result = await world.start(format="panel", topic="What should the city do about cars?", **files)

    assert result.response is not None and result.response.content.startswith("🎙️ Debate started")
    thread = world.thread()
    events = await world.events()
    assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "completed"
    [artifact] = [e for e in events if isinstance(e, Artifact)]
    [posted] = [m for m in thread.history() if m.attachments]
    assert posted.content == f"📎 {artifact.name}"
    assert posted.attachments[0].filename == artifact.name
    assert (await posted.attachments[0].read()).decode() == artifact.content
    assert cards(thread)[-1].title == "🏁 Debate over: What should the city do about cars?"


async def test_an_attachment_that_is_not_text_is_refused_privately(world: World) -> None:
    result = await world.start(format="panel", document1=("slides.pdf", b"%PDF-1.7 binary"))

    assert result.ephemeral and result.response is not None
    assert result.response.content == "slides.pdf is not a text or Markdown file: attach .txt or .md"
    assert world.channel.threads == []
    assert await world.rt.store.list_debates(5) == []


OXFORD = {
    **SCRIPT,
    "proposer": ["Ban them downtown; the evidence from Oslo is clear."],
    "critic": ["Oslo is small and rich; a ban elsewhere strands the poorest commuters."],
    "judge": [{"decision": "verdict", "winner": "proposer", "reasoning": "Better evidence."}],
}


@pytest.mark.rostra(script=OXFORD, limits={"max_rounds": 3})
async def test_oxford_audience_votes_before_and_after_with_reactions(world: World) -> None:
    await world.start(format="oxford")
    thread = world.thread()
    before = card(thread, "🗳️")
    assert "**People vote now.** React 👍 For or 👎 Against or 🤷 Undecided" in (
        before.embeds[0].description or ""
    )

    await world.alice.react(before, "🤷")
    await world.bob.react(before, "👎")
    await world.env.advance_time(60)
    after = [m for m in thread.history() if m.embeds and (m.embeds[0].title or "").startswith("🗳️")][-1]
    assert after.id != before.id
    await world.alice.react(after, "👍")
    await world.bob.react(after, "👍")
    await world.env.advance_time(60)

    events = await world.events()
    tallies = [e.human_tally for e in events if isinstance(e, VotingClosed)]
    assert tallies == [{"for": 0, "against": 1, "undecided": 1}, {"for": 2, "against": 0, "undecided": 0}]
    verdicts = [e.title for e in events if isinstance(e, Verdict)]
    titles = [e.title for e in cards(thread)]
    assert [t for t in titles if t and t.startswith("⚖️")] == [f"⚖️ {v}" + _by(events, v) for v in verdicts]
    assert titles[-1] == "🏁 Debate over: Should cities ban cars?"


def _by(events: list[object], title: str) -> str:
    [verdict] = [e for e in events if isinstance(e, Verdict) and e.title == title]
    return f" · {verdict.by.emoji} {verdict.by.name}" if verdict.by else ""
