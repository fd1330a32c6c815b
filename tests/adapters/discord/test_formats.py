"""Every format, run in full through `/debate start`: what each of its event types puts in the thread.

Each test reads the thread the way a member sees it (the bot's cards and notices, the personas'
messages), in order, and checks what was counted. Debates are short: one or two rounds, the
scripted model without latency, voting windows closed by moving simcord's clock.
"""

from __future__ import annotations

from typing import Any

import discord
import pytest

from core.events import (
    Artifact,
    ClockTick,
    DebateCompleted,
    DebateStarted,
    Event,
    HumanVoteOpened,
    Notice,
    SpeakerSwitched,
    TurnCompleted,
    Verdict,
    VoteCast,
    VoteWithdrawn,
    VotingClosed,
    VotingStarted,
)
from tests.adapters.discord.conftest import SCRIPT, TOPIC, World, card, cards, json_of, label, shown

WINDOW = 20


def _kinds(events: list[Event]) -> set[str]:
    return {e.kind for e in events}


def _body(message: discord.Message) -> str:
    return message.embeds[0].description or "" if message.embeds else message.content


def _votes(thread_messages: list[discord.Message]) -> list[discord.Message]:
    return [m for m in thread_messages if m.embeds and (m.embeds[0].title or "").startswith("🗳️")]


def _turn_text(message: discord.Message) -> str:
    """A persona message without its small heading line."""
    return message.content.split("\n", 1)[1]


def _posted_once(world: World, events: list[Event]) -> None:
    """Every turn was posted exactly once (then edited), and nothing else went through the webhook."""
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    assert len(world.persona_requests()) == len(turns)


# --- arena ---------------------------------------------------------------------------------------

ARENA = {
    **SCRIPT,
    "observer": [
        {"vote": "keep", "reason": "Strong on evidence."},
        {"vote": "replace", "reason": "Repeats herself."},
        {"error": "timeout"},
        {"vote": "replace", "reason": "Dodged the cost question."},
    ],
}


@pytest.mark.rostra(script=ARENA)
async def test_arena_turns_vote_card_tie_switch_notice_and_closing(world: World) -> None:
    await world.start()
    thread = world.thread()
    opening = cards(thread)[0]
    assert opening.fields[1].name == "How to vote"
    assert opening.fields[1].value == (
        "After each exchange but the last the observers vote on whether the speaker keeps the floor, on a"
        " vote card in the thread. If they tie, **you decide**: react ✅ keep or ❌ replace on the vote"
        " card within 30 s. One vote each: your newest reaction still on the card counts."
    )
    ballot = card(thread, "🗳️")
    live = _body(ballot)
    assert "**It's a tie: people decide!** React with ✅ Keep or ❌ Replace within 30 s." in live
    assert "People so far: ✅ Keep 0 · ❌ Replace 0 · voting closes <t:" in live
    assert "— *Could not vote; counted as keep.*" in live

    await world.alice.react(ballot, "❌")
    await world.bob.react(ballot, "✅")
    await world.bob.unreact(ballot, "✅")  # bob withdraws his vote
    await world.carol.react(ballot, "🎉")  # not an option: no vote
    assert "People so far: ✅ Keep 0 · ❌ Replace 1 · voting closes" in _body(card(thread, "🗳️"))
    await world.env.advance_time(30)

    events = await world.events()
    assert _kinds(events) >= {
        "debate_started",
        "phase_changed",
        "turn_started",
        "turn_delta",
        "turn_completed",
        "clock_tick",
        "voting_started",
        "vote_cast",
        "human_vote_opened",
        "vote_withdrawn",
        "voting_closed",
        "speaker_switched",
        "notice",
        "debate_completed",
    }
    [switch] = [e for e in events if isinstance(e, SpeakerSwitched)]
    [notice] = [e for e in events if isinstance(e, Notice)]
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    messages = shown(world)
    assert [label(m) for m in messages] == [
        f"🎙️ {TOPIC}",
        f"{turns[0].speaker.name}:",
        f"{turns[1].speaker.name}:",
        f"🗳️ Should {switch.old.name} keep the floor?",
        "⚠️",
        "🔁",
        f"{turns[2].speaker.name}:",
        f"{turns[3].speaker.name}:",
        f"{turns[4].speaker.name}:",
        f"🏁 Debate over: {TOPIC}",
    ]
    assert turns[2].speaker.id == switch.new.id  # who was voted in speaks; no vote follows round 2
    assert [_turn_text(m) for m in messages if m.webhook_id] == [t.text for t in turns]
    assert messages[1].content == f"-# Round 1 · for the motion\n{SCRIPT['proposition'][0]}"
    assert messages[4].content == f"⚠️ {notice.message}"
    assert "could not vote (timeout); counted as keep." in notice.message
    assert messages[5].content == (
        f"🔁 {switch.old.emoji} **{switch.old.name}** steps down; {switch.new.emoji} **{switch.new.name}**"
        f" takes the floor ({switch.reason})."
    )

    final = _body(messages[3])
    assert f"**Result: {switch.old.name} is replaced**" in final
    assert "AI: ✅ Keep 2 · ❌ Replace 2" in final and "People: ✅ Keep 0 · ❌ Replace 1" in final
    assert "*Tie broken by the people in the channel (keep 0, replace 1).*" in final
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 1}
    assert [e.voter.name for e in events if isinstance(e, VoteWithdrawn)] == ["bob"]
    assert [e.voter.name for e in events if isinstance(e, VoteCast) and e.voter.human] == ["alice", "bob"]

    # the clock ticks showed on the opening card while the debate ran; it ends saying why
    ticks = [e for e in events if isinstance(e, ClockTick)]
    opening_edits = [
        json_of(r)["embeds"][0]["footer"]["text"]
        for r in world.env.http_requests
        if r.method == "PATCH"
        and r.path == f"/channels/{thread.id}/messages/{messages[0].id}"
        and "embeds" in json_of(r)  # not the edits that set its buttons
    ]
    assert any(e.startswith("⏱ 0:00 elapsed · 5:00 left · paused for a vote\n") for e in opening_edits)
    assert len(ticks) >= 2
    assert (messages[0].embeds[0].footer.text or "").startswith("Ended: all 2 rounds were played")

    closing = messages[-1].embeds[0]
    figures = closing.fields[1].value or ""
    assert figures.startswith("2 rounds · 5 turns · ")
    assert "· 4 AI votes · 1 human vote · 1 switch (1 by the people) ·" in figures  # a tie the people broke
    _posted_once(world, events)


# --- oxford --------------------------------------------------------------------------------------

OXFORD: dict[str, Any] = {
    **SCRIPT,
    "proposer": ["Ban them downtown; the evidence from Oslo is clear."],
    "critic": ["Oslo is small and rich; a ban elsewhere strands the poorest commuters."],
    "moderator": ["Focus: does a ban help the people who have least?"],
    "judge": [
        {"decision": "continue", "reasoning": "Neither side has met the other's best point yet."},
        {"decision": "continue", "winner": "critic", "reasoning": "The critic answered the evidence."},
    ],
}


@pytest.mark.rostra(
    script=OXFORD, limits={"max_rounds": 2}, formats={"oxford": {"max_rounds": 2, "human_window": WINDOW}}
)
async def test_oxford_audience_cards_turns_verdicts_and_closing(world: World) -> None:
    await world.start(format="oxford")
    thread = world.thread()
    opening = cards(thread)[0]
    cast, how = opening.fields
    assert "🧑‍⚖️ **Juno Reyes** — rules on the debate" in (cast.value or "")
    assert "🪨 **Vera Stone** — against the motion, steelmanning the proposer first" in (cast.value or "")
    assert how.name == "How to vote"
    assert how.value == (
        "**You are the audience**: vote on the motion before the debate and again after the verdict,"
        f" reacting 👍 for, 👎 against or 🤷 undecided on each audience card within {WINDOW} s. The side"
        " that gains the most votes wins the audience, shown beside the judge's verdict. One vote each:"
        " your newest reaction still on the card counts."
    )
    before = card(thread, "🗳️")
    assert _body(before).startswith(
        f"**Vote now:** react with 👍 For, 👎 Against or 🤷 Undecided within {WINDOW} s. One vote each:"
    )
    assert {str(r.emoji): r.count for r in before.reactions} == {"👍": 1, "👎": 1, "🤷": 1}

    await world.alice.react(before, "👍")
    await world.bob.react(before, "👍")
    await world.carol.react(before, "🤷")
    await world.env.advance_time(WINDOW)
    after = _votes(thread.history())[-1]
    assert after.id != before.id
    await world.alice.react(after, "👎")
    await world.bob.react(after, "👍")
    await world.carol.react(after, "👎")
    await world.env.advance_time(WINDOW)

    events = await world.events()
    assert _kinds(events) >= {
        "debate_started",
        "phase_changed",
        "voting_started",
        "human_vote_opened",
        "vote_cast",
        "voting_closed",
        "turn_started",
        "turn_delta",
        "turn_completed",
        "verdict",
        "notice",
        "debate_completed",
    }
    tallies = [e.human_tally for e in events if isinstance(e, VotingClosed)]
    assert tallies == [{"for": 2, "against": 0, "undecided": 1}, {"for": 1, "against": 2, "undecided": 0}]
    messages = shown(world)
    assert [label(m) for m in messages] == [
        f"🎙️ {TOPIC}",
        "🗳️ Audience vote before the debate: where do you stand on the motion?",
        "Sol Amari:",
        "Celeste Mbeki:",
        "Vera Stone:",
        "Sol Amari:",
        "⚖️ Round 1: the debate continues · 🧑‍⚖️ Juno Reyes",
        "Celeste Mbeki:",
        "Vera Stone:",
        "Sol Amari:",
        "ℹ️",
        "⚖️ Verdict · 🧑‍⚖️ Juno Reyes",
        "🗳️ Audience vote after the verdict: where do you stand on the motion?",
        "⚖️ Audience",
        f"🏁 Debate over: {TOPIC}",
    ]
    assert messages[2].content == "-# Opening · the focus question\n" + OXFORD["moderator"][0]
    assert messages[3].content == "-# Round 1 · for the motion\n" + OXFORD["proposer"][0]
    assert _body(messages[1]) == (
        "**Result: More of the audience are for the motion**\n"
        "People: 👍 For 2 · 👎 Against 0 · 🤷 Undecided 1\n*3 people voted.*"
    )
    assert _body(messages[12]) == (
        "**Result: More are against the motion**\nPeople: 👍 For 1 · 👎 Against 2 · 🤷 Undecided 0\n"
        "*3 people voted.*"
    )
    critic_wins = "The critic wins (Vera Stone, against the motion)"
    assert _body(messages[6]) == "**Another round**\n\nNeither side has met the other's best point yet."
    assert messages[10].content == "ℹ️ Round 2 was the last: the judge's ruling stands as the verdict."
    assert _body(messages[11]) == f"**{critic_wins}**\n\nThe critic answered the evidence."
    assert _body(messages[13]) == (
        f"**{critic_wins}**\n\nFor -1, against +2 between the votes before and after the debate."
    )
    [audience] = [e for e in events if isinstance(e, Verdict) and e.by is None]
    assert audience.winner == "critic"
    closing = _body(messages[-1])
    assert f"Judge: {critic_wins}. Audience: {critic_wins}." in closing
    assert "· 6 human votes ·" in (messages[-1].embeds[0].fields[1].value or "")
    _posted_once(world, events)


# --- council -------------------------------------------------------------------------------------

COUNCIL: dict[str, Any] = {
    "persona:ada": [
        "A congestion charge on the centre.",
        "A congestion charge, its money spent on buses.",
        {"choice": "p1", "reason": "It pays for itself.", "delay": 10},
    ],
    "persona:dario": [
        "Tolls that rise at peak hours.",
        "Peak tolls, lower at night.",
        {"choice": "p3", "reason": "The centre is where it matters."},
    ],
    "persona:esme": [
        "A car-free centre with exemptions for disabled drivers.",
        "A car-free centre, exemptions written into law.",
        {"choice": "abstain", "reason": "Both leading plans have merit."},
    ],
    "persona:kit": ["More buses first.", "More buses, then a ban.", {"error": "timeout"}],
}


@pytest.mark.rostra(script=COUNCIL, formats={"council": {"rounds": 1, "human_window": WINDOW}})
async def test_council_proposals_tie_among_the_tied_only_result_and_closing(world: World) -> None:
    await world.start(format="council", topic="How should the city cut car traffic?")
    thread = world.thread()
    how = cards(thread)[0].fields[1]
    assert how.name == "How to vote"
    assert how.value == (
        "The members vote on the proposals or abstain (the most votes wins), on a vote card in the thread."
        " If they tie, **you break the tie**: react with a tied proposal's number (1️⃣, 2️⃣, 3️⃣, …) on the"
        f" vote card within {WINDOW} s; the card says which proposals are tied, and only those count. One"
        " vote each: your newest reaction still on the card counts."
    )
    ballot = card(thread, "🗳️")
    assert ballot.reactions == []  # no window yet: Rostra seeds the ballot only when people may vote
    assert "🧮 **Ada Quill** — *thinking…*" in _body(ballot)  # her vote takes a while
    await world.alice.react(ballot, "3️⃣")  # before the window: remembered
    await world.alice.react(ballot, "2️⃣")  # her newest, but 2️⃣ will not be tied: 3️⃣ stands

    await world.env.advance_time(10)  # Ada votes: a tie between 1️⃣ and 3️⃣; people decide
    seeded = card(thread, "🗳️").reactions
    # only the tied options are seeded (3️⃣ also carries Alice's early reaction, 2️⃣ only hers)
    assert {str(r.emoji): r.count for r in seeded} == {"3️⃣": 2, "2️⃣": 1, "1️⃣": 1}
    live = _body(card(thread, "🗳️"))
    assert live.startswith(
        "🧮 **Ada Quill** → 1️⃣ Ada Quill's proposal — It pays for itself.\n"
        "📈 **Dario Vance** → 3️⃣ Esme Hart's proposal — The centre is where it matters.\n"
        "⚖️ **Esme Hart** abstains — Both leading plans have merit.\n"
        "🛠️ **Kit Nakamura** abstains — *Could not vote; counted as an abstention.*\n\n"
        "**It's a tie between 1️⃣ Ada Quill's proposal and 3️⃣ Esme Hart's proposal: people decide!**"
        f" React with one of them within {WINDOW} s; the other options don't count. One vote each: your"
        " newest reaction still on the card counts.\nPeople so far: 1️⃣ Ada Quill's proposal 0 · 3️⃣ Esme Hart's"
        " proposal 1 · voting closes <t:"
    )
    await world.carol.react(ballot, "1️⃣")
    await world.bob.react(ballot, "3️⃣")
    await world.bob.react(ballot, "2️⃣")  # not tied: no vote, and no error; his 3️⃣ stands
    assert "People so far: 1️⃣ Ada Quill's proposal 1 · 3️⃣ Esme Hart's proposal 2 · " in _body(card(thread, "🗳️"))
    await world.bob.unreact(ballot, "3️⃣")  # takes his vote back
    assert "People so far: 1️⃣ Ada Quill's proposal 1 · 3️⃣ Esme Hart's proposal 1 · " in _body(card(thread, "🗳️"))
    await world.bob.react(ballot, "3️⃣")
    await world.env.advance_time(WINDOW)

    events = await world.events()
    assert _kinds(events) >= {
        "debate_started",
        "phase_changed",
        "turn_started",
        "turn_completed",
        "voting_started",
        "vote_cast",
        "human_vote_opened",
        "voting_closed",
        "notice",
        "verdict",
        "debate_completed",
    }
    [opened] = [e for e in events if isinstance(e, HumanVoteOpened)]
    assert [o.key for o in opened.options] == ["p1", "p3"]
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"p1": 1, "p3": 2}
    assert (closed.decision, closed.tie_broken_by) == ("p3", "humans")
    people = [(e.voter.name, e.choice) for e in events if isinstance(e, VoteCast) and e.voter.human]
    assert people == [("alice", "p3"), ("carol", "p1"), ("bob", "p3"), ("bob", "p3")]
    assert [e.voter.name for e in events if isinstance(e, VoteWithdrawn)] == ["bob"]

    messages = shown(world)
    members = ["Ada Quill:", "Dario Vance:", "Esme Hart:", "Kit Nakamura:"]
    assert [label(m) for m in messages] == [
        "🎙️ How should the city cut car traffic?",
        *members,
        *members,
        "🗳️ Which proposal should the council adopt?",
        "⚠️",
        "⚖️ Council decision",
        "🏁 Debate over: How should the city cut car traffic?",
    ]
    assert messages[1].content == "-# Round 0 · proposal\nA congestion charge on the centre."
    assert messages[7].content == "-# Round 1 · revision\nA car-free centre, exemptions written into law."
    assert messages[10].content == "⚠️ Kit Nakamura could not vote (timeout); counted as an abstention."
    result = _body(messages[9])
    assert "**Result: Esme Hart's proposal wins**\n" in result
    assert (
        "AI: 1️⃣ Ada Quill's proposal 1 · 2️⃣ Dario Vance's proposal 0 · 3️⃣ Esme Hart's proposal 1"
        " · 4️⃣ Kit Nakamura's proposal 0\nPeople: 1️⃣ Ada Quill's proposal 1 · 3️⃣ Esme Hart's proposal 2\n"
    ) in result
    assert "the people broke it (Ada Quill 1, Esme Hart 2)." in result
    assert "2 abstained (Esme Hart and Kit Nakamura)." in result
    assert "voting closes" not in result
    assert not {"p1", "p2", "p3", "p4", "abstain"} & set(result.replace("\n", " ").split())
    assert _body(messages[11]) == (
        "**Esme Hart's proposal**\n"
        "Votes: 1️⃣ Ada Quill's proposal 1 · 2️⃣ Dario Vance's proposal 0 · 3️⃣ Esme Hart's proposal 1"
        " · 4️⃣ Kit Nakamura's proposal 0\n"
        "Abstained: Esme Hart, Kit Nakamura\n\n"
        "A car-free centre, exemptions written into law."
    )
    assert "the council adopted Esme Hart's proposal" in _body(messages[-1])
    figures = messages[-1].embeds[0].fields[1].value or ""
    assert figures.startswith("1 round · 8 turns · ") and "· 4 AI votes · 3 human votes ·" in figures
    assert "switch" not in figures
    _posted_once(world, events)


# --- panel ---------------------------------------------------------------------------------------

NOTES = [
    ("transit.md", b"# Transit\nBuses carry more people per lane than cars ever will.\n"),
    ("retail.md", b"# Retail\nShops on car-free streets saw footfall rise in the first year.\n"),
    ("budget.md", b"# Budget\nRoad upkeep costs the city more than it collects in parking fees.\n"),
]
PANEL: dict[str, Any] = {
    "persona:basil": [
        "My note says “Buses carry more people per lane than cars” and also “trams are always cheaper"
        " than buses everywhere”."
    ],
    "persona:rhea": ["Shops gained: “footfall rise in the first year”, as retail.md puts it."],
    "persona:kit": [{"error": "reply cut off"}],
    "synthesiser": ["Start with buses and a car-free shopping street; review after a year."],
}


@pytest.mark.rostra(script=PANEL, formats={"panel": {"rounds": 0}})
async def test_panel_answers_with_checked_quotes_a_notice_the_file_and_closing(world: World) -> None:
    files: dict[str, Any] = {f"document{i}": note for i, note in enumerate(NOTES, 1)}

    result = await world.start(format="panel", topic="What should the city do about cars?", **files)

    assert result.response is not None and result.response.content.startswith("🎙️ Debate started")
    thread = world.thread()
    events = await world.events()
    assert _kinds(events) >= {
        "debate_started",
        "phase_changed",
        "turn_started",
        "turn_completed",
        "notice",
        "artifact",
        "debate_completed",
    }
    assert not any(isinstance(e, VotingStarted) for e in events)
    assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "completed"
    opening = cards(thread)[0]
    cast, how = opening.fields
    assert (cast.value or "").splitlines() == [
        "🦉 **Basil Thorne** — answers from transit.md, 64 characters",
        "🔭 **Rhea Lindqvist** — answers from retail.md, 72 characters",
        "🛠️ **Kit Nakamura** — answers from budget.md, 75 characters",
        "🎙️ **Sol Amari** — writes the final answer",
    ]
    assert how.name == "How it works" and (how.value or "").startswith("Nothing to vote on:")
    [started] = [e for e in events if isinstance(e, DebateStarted)]
    assert "humans" not in started.settings

    messages = shown(world)
    assert [label(m) for m in messages] == [
        "🎙️ What should the city do about cars?",
        "Basil Thorne:",
        "Rhea Lindqvist:",
        "Kit Nakamura:",
        "⚠️",
        "Sol Amari:",
        "📎",
        "🏁 Debate over: What should the city do about cars?",
    ]
    assert messages[1].content.splitlines()[-2:] == [
        "> “Buses carry more people per lane than cars” ✔ verified in transit.md",
        "> “trams are always cheaper than buses everywhere” ✘ not found in transit.md",
    ]
    assert (
        messages[2].content.splitlines()[-1] == "> “footfall rise in the first year” ✔ verified in retail.md"
    )
    assert messages[3].content.endswith("*(Kit Nakamura lost the thread for a moment and yields the floor.)*")
    assert (
        messages[4].content
        == "⚠️ Kit Nakamura's turn failed twice (reply cut off); a fallback line stands in."
    )
    assert messages[5].content == "-# Q1 · Synthesis\n" + PANEL["synthesiser"][0]
    assert not any(m.reactions for m in messages)
    [artifact] = [e for e in events if isinstance(e, Artifact)]
    posted = messages[6]
    assert posted.attachments[0].filename == artifact.name
    assert (await posted.attachments[0].read()).decode() == artifact.content
    assert "✘ not found in transit.md" in artifact.content
    figures = messages[-1].embeds[0].fields[1].value or ""
    assert figures.startswith("4 turns · ") and "vote" not in figures and "switch" not in figures
    _posted_once(world, events)


async def test_an_attachment_that_is_not_text_is_refused_privately(world: World) -> None:
    result = await world.start(format="panel", document1=("slides.pdf", b"%PDF-1.7 binary"))

    assert result.ephemeral and result.response is not None
    assert result.response.content == "slides.pdf is not a text or Markdown file: attach .txt or .md"
    assert world.channel.threads == []
    assert await world.rt.store.list_debates(5) == []
