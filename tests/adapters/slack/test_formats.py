"""Every format, run in full from a signed app_mention: what reaches Slack for each kind of event the
format emits (and that each kind is covered), in order, with nothing posted twice."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.render.text import escape, model_text
from core.events import (
    Artifact,
    DebateCompleted,
    DebateStarted,
    Event,
    Notice,
    SpeakerSwitched,
    TurnCompleted,
    Verdict,
    VoteCast,
)
from core.session import DebateHandle
from testkit.slack_api import BOT_USER, FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    DAN,
    ERIN,
    Harness,
    blocks_text,
    open_harness,
)

HOLD = 5.0  # human windows (10 s here) wait for the test; the scripted models answer at once
Message = dict[str, Any]


# --- what the thread shows -------------------------------------------------------------------------


def one(messages: list[Message], predicate: Callable[[Message], bool]) -> Message:
    found = [m for m in messages if predicate(m)]
    assert len(found) == 1, f"expected one matching message, found {len(found)}"
    return found[0]


def edits_of(api: FakeSlack, ts: str) -> list[str]:
    """Every version of a message that Slack was asked to show by an edit, in order."""
    return [
        blocks_text(c.args)
        for c in api.calls_to("chat.update")
        if c.args.get("ts") == ts and c.args.get("channel") == CHANNEL
    ]


def reactions_on(api: FakeSlack, ts: str) -> dict[str, list[str]]:
    return {name: users for name, users in api.reactions.get((CHANNEL, ts), {}).items() if users}


async def run_to_the_end(slack: Harness, handle: DebateHandle, clock: HeldClock) -> None:
    """Let every held window close in turn until the debate has ended."""
    while True:
        await slack.api.wait_until(lambda: handle.done or clock.waiting >= 1)
        if handle.done:
            break
        await clock.release()
    await slack.settle()


def assert_turns_shown_once(slack: Harness, events: list[Event]) -> list[Message]:
    """One persona message per turn, in the order spoken, ending on the turn's full text."""
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    spoken = [m for m in slack.thread() if m.get("username")]
    assert [m["username"] for m in spoken] == [t.speaker.name for t in turns]
    for message, turn in zip(spoken, turns, strict=True):
        assert model_text(turn.text.split("\n")[0]) in message["text"]
        assert message["text"].split("\n")[0].startswith("_")  # the heading
        assert not message["text"].endswith("…")  # not left half-streamed
    return spoken


def assert_posted_once_each(api: FakeSlack) -> None:
    """No message was posted twice: every post says something different."""
    posts = [(m.get("username"), m["text"]) for m in api.posted]  # what reached the workspace
    assert len(posts) == len(set(posts)), [p for p in posts if posts.count(p) > 1]


def kinds(events: list[Event]) -> set[str]:
    return {e.kind for e in events}


# --- arena -----------------------------------------------------------------------------------------

ARENA_SCRIPT: dict[str, Any] = {
    "proposition": ["Cities should ban cars from their centres. Streets are for people, not parking."],
    "opposition": ["A ban punishes the people with no other way to get to work."],
    "observer": [
        {"vote": "keep", "reason": "Clear."},
        {"vote": "keep", "reason": "Steady."},
        {"vote": "replace", "reason": "Repetitive."},
        {"vote": "replace", "reason": "Too vague."},
        "I refuse to fill in your form.",  # unreadable: dropped, with a notice
        {"vote": "keep", "reason": "Better now."},
    ],
    "moderator": ["Both sides agreed streets matter; they split on who pays."],
}


async def test_arena_in_full(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=HOLD)
    async with open_harness(
        tmp_path, api, script=ARENA_SCRIPT, clock=clock, limits={"max_rounds": 3}
    ) as slack:
        await slack.mention("debate Should cities ban cars? rounds=3 human_window=10")
        handle = await slack.wait_running()
        await api.wait_until(lambda: handle.human_vote_open("v1") and len(api.calls_to("reactions.add")) == 2)
        card = slack.api.calls_to("reactions.add")[0].args["timestamp"]
        await slack.react(ALICE, "x", card)
        await slack.react(BOB, "x", card)
        await slack.react(CAROL, "white_check_mark", card)
        await slack.react(DAN, "x", card)
        await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 4)
        await slack.react(DAN, "x", card, added=False)  # Dan withdraws
        await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 3)
        await api.wait_until(
            lambda: "People so far: ✅ Keep 1 · ❌ Replace 2" in blocks_text(api.messages[(CHANNEL, card)])
        )
        await run_to_the_end(slack, handle, clock)
        events = await slack.events(handle.debate_id)

    assert kinds(events) == {
        "debate_started", "phase_changed", "turn_started", "turn_delta", "turn_completed",
        "voting_started", "vote_cast", "human_vote_opened", "vote_withdrawn", "voting_closed",
        "speaker_switched", "clock_tick", "notice", "debate_completed",
    }  # fmt: skip
    started = next(e for e in events if isinstance(e, DebateStarted))
    first = next(m.persona for m in started.cast if m.role == "proposition")
    switch = next(e for e in events if isinstance(e, SpeakerSwitched))

    # The opening card: the cast, how people vote in arena, the live status, then the end.
    opening = slack.opening()
    shown = blocks_text(opening)
    assert "observers vote on whether the speaker keeps the floor" in shown
    assert "If they tie, *you decide*: react ✅ Keep or ❌ Replace on the vote card within 10 s" in shown
    assert "🏁 Finished: all 3 rounds were played" in shown
    statuses = edits_of(api, opening["ts"])
    assert any("🗳️ Voting: Observers judge" in s for s in statuses)  # PhaseChanged
    assert any("elapsed · " in s and " left" in s for s in statuses)  # ClockTick

    thread = slack.thread()
    spoken = assert_turns_shown_once(slack, events)
    assert spoken[0]["username"] == first.name
    assert spoken[0]["icon_url"] == slack.rt.personas[first.id].avatar_url
    assert edits_of(api, spoken[0]["ts"]) == []  # posted whole (Slack's default): the name stays

    # The first vote card: AI votes, the tie opened to people, their votes, the result.
    first_card = one(thread, lambda m: m["ts"] == card)
    assert first_card["text"] == f"Vote: Should {first.name} keep the floor?"
    assert reactions_on(api, card)["white_check_mark"] == [BOT_USER, CAROL]
    versions = edits_of(api, card)
    assert any(
        "*It's a tie: people decide!* React with ✅ Keep or ❌ Replace within 10 s." in v for v in versions
    )
    assert any("People so far: ✅ Keep 1 · ❌ Replace 3" in v for v in versions)  # before Dan withdrew
    final = blocks_text(first_card)
    for reason in (
        "✅ Keep — Clear.",
        "✅ Keep — Steady.",
        "❌ Replace — Repetitive.",
        "❌ Replace — Too vague.",
    ):
        assert reason in final
    assert f"Result: {first.name} is replaced" in final
    assert "AI: ✅ Keep 2 · ❌ Replace 2" in final
    assert "People: ✅ Keep 1 · ❌ Replace 2" in final
    assert "Voting is closed." in final

    switched = one(thread, lambda m: "steps down" in m["text"])
    assert (
        f"*{switch.old.name}* steps down; {switch.new.emoji} *{switch.new.name}* takes the floor"
        in switched["text"]
    )
    dropped = next(e for e in events if isinstance(e, Notice))
    one(thread, lambda m: m["text"] == f"⚠️ {escape(dropped.message)}")

    second_card = one(thread, lambda m: m["text"] == f"Vote: Should {switch.new.name} keep the floor?")
    second = blocks_text(second_card)
    assert f"Result: {switch.new.name} keeps the floor" in second
    assert "_no vote_" in second  # the observer whose vote was dropped
    one(thread, lambda m: m["text"].startswith("🏁 *Closing*: all 3 rounds were played"))
    end = thread[-1]
    assert end["text"] == "The end: all 3 rounds were played"
    # two votes, after rounds 1 and 2: none follows the last round
    assert len([m for m in thread if m["text"].startswith("Vote: ")]) == 2
    assert "Statistics" in blocks_text(end)
    assert "3 human votes" in blocks_text(end)
    order = [thread.index(m) for m in (first_card, switched, second_card, end)]
    assert order == sorted(order)
    assert_posted_once_each(api)


# --- oxford ----------------------------------------------------------------------------------------

OXFORD_SCRIPT: dict[str, Any] = {
    "moderator": ["What should the city centre be for?", "They agree on safety; they split on cost."],
    "proposer": ["Ban them: see [the Ghent plan](https://example.org/ghent) for what happened."],
    "critic": ["The strongest case for a ban is safety; but a ban hurts people who cannot walk far."],
    "judge": [
        {"decision": "continue", "reasoning": "Both sides need another round."},
        {"decision": "continue", "winner": "proposer", "reasoning": "Side A answered the cost point."},
    ],
}


async def test_oxford_in_full(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=HOLD)
    async with open_harness(
        tmp_path, api, script=OXFORD_SCRIPT, clock=clock, limits={"max_rounds": 2}
    ) as slack:
        await slack.mention("debate Should cities ban cars? format=oxford rounds=2 human_window=10")
        handle = await slack.wait_running()

        async def audience_votes(when: str, reactions: list[tuple[str, str]]) -> str:
            vote_id = f"audience-{when}"
            title = f"Vote: Audience vote {when} the "
            await api.wait_until(
                lambda: any(
                    m["text"].startswith(title) and "*Vote now:*" in blocks_text(m) for m in slack.thread()
                )
            )
            card: str = next(m["ts"] for m in slack.thread() if m["text"].startswith(title))
            for person, name in reactions:
                await slack.react(person, name, card)
            people = {p for p, _ in reactions}
            await api.wait_until(lambda: set(handle.state.ballots[vote_id].human_votes) == people)
            await clock.release()
            return card

        before = await audience_votes("before", [(ALICE, "+1"), (BOB, "-1::skin-tone-2"), (CAROL, "shrug")])
        after = await audience_votes("after", [(ALICE, "thumbsup"), (BOB, "+1"), (CAROL, "+1::skin-tone-4")])
        await run_to_the_end(slack, handle, clock)
        events = await slack.events(handle.debate_id)

    assert kinds(events) == {
        "debate_started", "phase_changed", "turn_started", "turn_delta", "turn_completed",
        "voting_started", "human_vote_opened", "vote_cast", "voting_closed", "verdict", "notice",
        "debate_completed",
    }  # fmt: skip
    shown = blocks_text(slack.opening())
    assert (
        "Format *oxford* · up to 2 rounds, the judge rules after each · the audience votes before and after"
        in shown
    )
    assert (
        "*How to vote:* *You are the audience*: vote on the motion before the debate and again after the"
        " verdict, reacting 👍 For, 👎 Against or 🤷 Undecided on each audience card within 10 s." in shown
    )
    assert "🧑‍⚖️ *Juno Reyes* — rules on the debate" in shown

    thread = slack.thread()
    assert thread[0]["ts"] == before  # the audience votes before anyone speaks
    seeds = [c.args["name"] for c in api.calls_to("reactions.add") if c.args["timestamp"] == before]
    assert seeds == ["+1", "-1", "shrug"]  # the ballot, in the card's order
    assert {n for n, users in reactions_on(api, before).items() if BOT_USER in users} == set(seeds)
    opened = [v for v in edits_of(api, before) if "*Vote now:*" in v]
    assert opened and "react with 👍 For, 👎 Against or 🤷 Undecided within 10 s." in opened[0]
    card = blocks_text(api.messages[(CHANNEL, before)])
    assert "Result: The audience is split" in card
    assert "People: 👍 For 1 · 👎 Against 1 · 🤷 Undecided 1" in card
    assert "AI:" not in card  # nobody but the audience votes here
    assert "People: 👍 For 3 · 👎 Against 0 · 🤷 Undecided 0" in blocks_text(api.messages[(CHANNEL, after)])

    spoken = assert_turns_shown_once(slack, events)
    assert [m["username"] for m in spoken[:4]] == ["Sol Amari", "Celeste Mbeki", "Vera Stone", "Sol Amari"]
    assert "*Sources*" not in spoken[1]["text"]  # no research: a model's link is text, no source
    assert "the Ghent plan (`https://example.org/ghent`)" in spoken[1]["text"]
    assert "<https://example.org/ghent|" not in spoken[1]["text"]

    verdicts = [e for e in events if isinstance(e, Verdict)]
    assert [v.title for v in verdicts] == ["Round 1: the debate continues", "Verdict", "Audience"]
    one(
        thread,
        lambda m: "*⚖️ Round 1: the debate continues* (🧑‍⚖️ Juno Reyes): *Another round*" in blocks_text(m),
    )
    capped = one(thread, lambda m: m["text"].startswith("ℹ️ Round 2 was the last"))
    verdict = one(thread, lambda m: m["text"].startswith("Verdict:"))
    assert "*⚖️ Verdict* (🧑‍⚖️ Juno Reyes): *The proposer wins (Celeste Mbeki, for the motion)*" in blocks_text(
        verdict
    )
    assert "Side A answered the cost point." in blocks_text(verdict)
    audience = one(thread, lambda m: m["text"].startswith("Audience:"))
    assert "*⚖️ Audience*: *The proposer wins (Celeste Mbeki, for the motion)*" in blocks_text(audience)
    assert "For +2, against -1 between the votes before and after" in blocks_text(audience)
    assert "Votes:" not in blocks_text(audience)  # the gains are its reasoning; a council shows a tally
    end = thread[-1]
    assert "Judge: The proposer wins" in blocks_text(end)
    assert "Audience: The proposer wins" in blocks_text(end)
    order = [
        thread.index(m) for m in (capped, verdict, one(thread, lambda m: m["ts"] == after), audience, end)
    ]
    assert order == sorted(order)
    assert_posted_once_each(api)


# --- council ---------------------------------------------------------------------------------------

COUNCIL_SCRIPT: dict[str, Any] = {
    "persona:ada:council": [
        "Pedestrianise the core in phases.",
        "Phase it, core first.",
        {"choice": "p2", "reason": "Cheaper."},
    ],
    "persona:dario:council": [
        "Price the roads instead.",
        "Charge by the hour.",
        {"choice": "p1", "reason": "Clearer."},
    ],
    "persona:esme:council": [
        "Protect access for disabled people first.",
        "Access first.",
        {"choice": "abstain", "reason": "Both miss access."},
    ],
    "persona:kit:council": ["Build the tram before any ban.", "Tram first.", "I cannot choose."],
}


async def test_council_in_full(tmp_path: Path, api: FakeSlack, caplog: pytest.LogCaptureFixture) -> None:
    clock = HeldClock(hold=HOLD)
    async with open_harness(tmp_path, api, script=COUNCIL_SCRIPT, clock=clock) as slack:
        await slack.mention("debate How should the city cut traffic? format=council rounds=1 human_window=10")
        handle = await slack.wait_running()
        await api.wait_until(
            lambda: (
                any("It's a tie" in blocks_text(m) for m in slack.thread())
                and len(api.calls_to("reactions.add")) == 4
            )  # the card shows open, then its ballot
        )
        card = api.calls_to("reactions.add")[0].args["timestamp"]
        assert [c.args["name"] for c in api.calls_to("reactions.add")] == ["one", "two", "three", "four"]
        await slack.react(ALICE, "two", card)
        await slack.react(BOB, "one", card)
        await slack.react(CAROL, "two", card)
        await slack.react(DAN, "three", card)  # Esme's proposal is not in the tie: not counted
        await slack.react(ERIN, "one", card)
        await slack.react(ERIN, "four", card)  # Erin's newest reaction is outside the tie: her 1️⃣ stands
        await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 4)
        await api.wait_until(
            lambda: (
                "People so far: 1️⃣ Ada Quill's proposal 2 · 2️⃣ Dario Vance's proposal 2"
                in blocks_text(api.messages[(CHANNEL, card)])
            )
        )
        await slack.react(ERIN, "one", card, added=False)  # Erin withdraws: 2–1 for Dario's
        await api.wait_until(lambda: len(handle.state.ballots["v1"].human_votes) == 3)
        await run_to_the_end(slack, handle, clock)
        events = await slack.events(handle.debate_id)

    assert kinds(events) == {
        "debate_started", "phase_changed", "turn_started", "turn_completed", "voting_started",
        "vote_cast", "human_vote_opened", "vote_withdrawn", "voting_closed", "verdict", "notice",
        "debate_completed",
    }  # fmt: skip
    people = {e.voter.id: e.choice for e in events if isinstance(e, VoteCast) and e.voter.human}
    assert people == {ALICE: "p2", BOB: "p1", CAROL: "p2", ERIN: "p1"}  # never Dan's p3, never p4
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []

    shown = blocks_text(slack.opening())
    assert "Format *council* · 1 revision round · the most votes wins · people break ties" in shown
    assert (
        "If they tie, *you break the tie*: react with a tied proposal's number (1️⃣, 2️⃣, 3️⃣, …) on the vote"
        " card within 10 s" in shown
    )
    assert "📈 *Dario Vance* — proposes, revises and votes" in shown

    thread = slack.thread()
    spoken = assert_turns_shown_once(slack, events)
    assert [m["username"] for m in spoken] == ["Ada Quill", "Dario Vance", "Esme Hart", "Kit Nakamura"] * 2

    tie = [v for v in edits_of(api, card) if "It's a tie" in v]
    assert tie and (
        "*It's a tie between 1️⃣ Ada Quill's proposal and 2️⃣ Dario Vance's proposal: people decide!*"
        " React with one of them within 10 s; the other options don't count." in tie[0]
    )
    final = blocks_text(api.messages[(CHANNEL, card)])
    assert "📈 *Dario Vance* → 1️⃣ Ada Quill's proposal — Clearer." in final
    assert "⚖️ *Esme Hart* abstains — Both miss access." in final
    assert "🛠️ *Kit Nakamura* abstains — _Vote unreadable; counted as an abstention._" in final
    assert "*Result: Dario Vance's proposal wins*" in final
    assert "AI: 1️⃣ Ada Quill's proposal 1 · 2️⃣ Dario Vance's proposal 1 · 3️⃣ Esme Hart's proposal 0" in final
    assert "People: 1️⃣ Ada Quill's proposal 1 · 2️⃣ Dario Vance's proposal 2\n" in final
    assert "2 abstained (Esme Hart and Kit Nakamura)" in final
    assert "p1" not in final and "p2" not in final

    unreadable = next(e for e in events if isinstance(e, Notice))
    one(thread, lambda m: m["text"] == f"⚠️ {escape(unreadable.message)}")
    decision = one(thread, lambda m: m["text"].startswith("Council decision:"))
    text = blocks_text(decision)
    assert "*⚖️ Council decision*: *Dario Vance's proposal*" in text
    assert "Charge by the hour." in text
    assert "Votes: 1️⃣ Ada Quill's proposal 1 · 2️⃣ Dario Vance's proposal 1" in text
    assert "Abstained: Esme Hart" in text  # as on Discord's card
    closing = thread[-1]
    assert closing["text"] == "The end: the council voted after 1 revision round"
    assert "the council adopted Dario Vance's proposal" in blocks_text(closing)
    assert_posted_once_each(api)


# --- panel -----------------------------------------------------------------------------------------

STREETS = "# Streets\n\nCities that removed parking saw more people walking in the centre.\n"
VANS = "Delivery vans need access before ten in the morning, the survey found.\n"
PANEL_SCRIPT: dict[str, Any] = {
    "persona:basil": ['My source: "cities that removed parking saw more people walking" in the centre.'],
    "persona:rhea": [
        'The survey says "vans may enter the centre at any hour" which matters.',
        {"error": "the reply was cut off"},
    ],
    "synthesiser": [
        {"questions": ["What happens to deliveries?"]},
        "Close the core to cars, keep morning deliveries.",
    ],
}


async def test_panel_in_full(tmp_path: Path, api: FakeSlack) -> None:
    files = [
        api.share_file("streets.md", STREETS, filetype="markdown"),
        api.share_file("vans.txt", VANS),
        api.share_file("questions.md", "What happens to deliveries? Who pays?\n", filetype="markdown"),
    ]
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats={"panel": {"rounds": 1}}) as slack:
        await slack.mention("debate Cars in the centre format=panel questions=1", files=files)
        handle = await slack.wait_running()
        await slack.settle()
        events = await slack.events(handle.debate_id)

    assert kinds(events) == {
        "debate_started", "phase_changed", "turn_started", "turn_delta", "turn_completed", "notice",
        "artifact", "debate_completed",
    }  # fmt: skip
    shown = blocks_text(slack.opening())
    assert "Format *panel* · 1 question drawn from questions.md · 1 round of responses · 2 documents" in shown
    assert f"🦉 *Basil Thorne* — answers from streets.md, {len(STREETS)} characters" in shown
    assert f"🔭 *Rhea Lindqvist* — answers from vans.txt, {len(VANS)} characters" in shown
    assert "*How it works:* Nothing to vote on: each panellist answers from their own document" in shown
    assert "Sol Amari writes the final answer" in shown
    assert "react" not in shown

    thread = slack.thread()
    spoken = assert_turns_shown_once(slack, events)
    assert [m["username"] for m in spoken] == [
        "Sol Amari",
        "Basil Thorne",
        "Rhea Lindqvist",
        "Basil Thorne",
        "Rhea Lindqvist",
        "Sol Amari",
    ]
    assert spoken[0]["text"] == "_Questions from questions.md_\nQ1. What happens to deliveries?"
    assert "> “cities that removed parking saw more people walking” ✔ verified" in spoken[1]["text"]
    assert "> “vans may enter the centre at any hour” ✘ not found in vans.txt" in spoken[2]["text"]
    assert spoken[4]["text"].startswith("_Q1 · Round 1 · from vans.txt_\n_(Rhea Lindqvist lost the thread")
    failed = next(e for e in events if isinstance(e, Notice))
    one(thread, lambda m: m["text"] == f"⚠️ {escape(failed.message)}")
    assert spoken[5]["text"] == "_Q1 · Synthesis_\nClose the core to cars, keep morning deliveries."
    one(thread, lambda m: m["text"] == "🏁 *Closing*: 1 question answered")

    artifact = next(e for e in events if isinstance(e, Artifact))
    upload, picture = api.files.values()  # the Q&A, then the results picture after the closing card
    assert picture["filename"] == f"rostra-{artifact.debate_id}-results.png"
    assert (upload["filename"], upload["channel"], upload["thread_ts"]) == (
        artifact.name,
        CHANNEL,
        slack.opening()["ts"],
    )
    assert upload["content"] == artifact.content
    assert "## Q1. What happens to deliveries?" in upload["content"]
    end = thread[-1]
    assert end["text"] == "The end: 1 question answered"
    assert "Quotes checked: 2 verified, 1 not found" in blocks_text(end)
    done = next(e for e in events if isinstance(e, DebateCompleted))
    assert done.reason == "completed"
    assert_posted_once_each(api)
