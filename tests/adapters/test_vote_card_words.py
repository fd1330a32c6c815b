"""A vote card says the same words on Discord and on Slack (adapters/vote_card_text.py): each AI
voter's line, how people vote while their window is open, their votes so far and the result. Only
the marks differ (Markdown against mrkdwn), and when voting closes (a Discord timestamp; Slack's date
token and countdown)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from adapters.discord.render.events import DiscordView
from adapters.discord.render.ops import Show
from adapters.slack.render.events import SlackView
from adapters.slack.render.ops import Post, Update
from core.events import Event, HumanVoteOpened, VoteCast, VotingClosed, VotingStarted
from core.formats.council import ABSTAIN
from core.models import PersonaRef, VoteOption, Voter

AT = datetime(2030, 1, 1, tzinfo=UTC)
ADA = PersonaRef(id="ada", name="Ada Quill", emoji="🧮")
BASIL = PersonaRef(id="basil", name="Basil Thorne", emoji="🦉")
VERA = PersonaRef(id="vera", name="Vera Stone", emoji="🌿")
KEEP = VoteOption(key="keep", label="Keep", emoji="✅")
REPLACE = VoteOption(key="replace", label="Replace", emoji="❌")
PROPOSALS = tuple(
    VoteOption(key=f"p{n}", label=f"{name}'s proposal", emoji=emoji)
    for n, name, emoji in ((1, "Ada Quill", "1️⃣"), (2, "Basil Thorne", "2️⃣"), (3, "Vera Stone", "3️⃣"))
)
ALICE = Voter(id="u1", name="alice", human=True)


def arena(humans: str) -> VotingStarted:
    return VotingStarted(
        vote_id="v1",
        title="Should Ada Quill keep the floor?",
        subject=ADA,
        options=(KEEP, REPLACE),
        voters=(BASIL, VERA),
        humans=humans,
    )


def council() -> VotingStarted:
    return VotingStarted(
        vote_id="v1", title="Which proposal?", options=PROPOSALS, voters=(ADA, BASIL, VERA), humans="tiebreak"
    )


def audience() -> VotingStarted:
    return VotingStarted(vote_id="v1", title="Where do you stand?", options=(KEEP, REPLACE), humans="vote")


def ai(voter: PersonaRef, choice: str, reason: str = "", *, defaulted: bool = False) -> VoteCast:
    return VoteCast(
        vote_id="v1", voter=Voter.of(voter), choice=choice, reason=reason, defaulted=defaulted, at=AT
    )


def opened(*options: VoteOption, reason: str = "vote") -> HumanVoteOpened:
    return HumanVoteOpened(vote_id="v1", options=options, window=45, reason=reason, at=AT)


def closed(decision: str, label: str, tally: dict[str, float], people: dict[str, int]) -> VotingClosed:
    return VotingClosed(
        vote_id="v1", decision=decision, decision_label=label, tally=tally, human_tally=people, at=AT
    )


CASES: dict[str, list[Event]] = {
    "before the voters answer": [arena("tiebreak"), ai(BASIL, "keep", "Sharp answers.")],
    "a defaulted vote, then a tie for the people": [
        arena("tiebreak"),
        ai(BASIL, "keep", "Sharp answers."),
        ai(VERA, "keep", "Could not vote; counted as keep.", defaulted=True),
        opened(KEEP, REPLACE, reason="tie"),
        VoteCast(vote_id="v1", voter=ALICE, choice="replace", at=AT),
    ],
    "people vote too": [arena("vote"), ai(BASIL, "replace", "It drifted."), opened(KEEP, REPLACE)],
    "a tie among some proposals": [
        council(),
        ai(ADA, "p1"),
        ai(BASIL, "p2"),
        ai(VERA, ABSTAIN, "Neither."),
        opened(*PROPOSALS[:2], reason="tie"),
    ],
    "an audience with no AI voters": [audience(), opened(KEEP, REPLACE)],
    "the result": [
        arena("tiebreak"),
        ai(BASIL, "keep"),
        opened(KEEP, REPLACE, reason="tie"),
        VoteCast(vote_id="v1", voter=ALICE, choice="replace", at=AT),
        closed("replace", "Ada Quill is replaced", {"keep": 1, "replace": 1}, {"keep": 0, "replace": 1}),
    ],
}


def _plain(text: str) -> list[str]:
    """The card's lines without their marks, and without when voting closes (each platform's own)."""
    text = re.sub(r" · voting closes .*", "", text)
    text = text.replace("**", "").replace("*", "").replace("_", "")
    return [line for line in text.splitlines() if line.strip()]


def discord_card(events: list[Event], *, buttons: bool = False) -> list[str]:
    view = DiscordView(streaming=False, buttons=buttons)
    shows = [op for event in events for op in view.render(event) if isinstance(op, Show)]
    return _plain(shows[-1].posts[0].cards[0].description)


def slack_card(events: list[Event], *, buttons: bool = False) -> list[str]:
    view = SlackView(streaming=False, limit=4000, buttons=buttons)
    cards = [op for event in events for op in view.render(event) if isinstance(op, Post | Update)]
    blocks = cards[-1].blocks[1:]  # after the title (Discord's is the embed's)
    texts = [str((b.get("text") or {}).get("text", "")) for b in blocks if b.get("type") == "section"]
    texts += [str(e.get("text", "")) for b in blocks if b.get("type") == "context" for e in b["elements"]]
    return _plain("\n".join(texts))


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("buttons", [False, True], ids=["reactions", "buttons"])
def test_both_cards_say_the_same(name: str, buttons: bool) -> None:
    events = CASES[name]
    on_slack = [line for line in slack_card(events, buttons=buttons) if line != "Voting is closed."]
    assert discord_card(events, buttons=buttons) == on_slack  # Discord says it in the footer


def test_what_the_cards_say() -> None:
    """The words themselves, read on one platform (the test above holds the other to them)."""
    tie = discord_card(CASES["a defaulted vote, then a tie for the people"])
    assert tie == [
        "🦉 Basil Thorne → ✅ Keep — Sharp answers.",
        "🌿 Vera Stone → ✅ Keep — Could not vote; counted as keep.",
        "It's a tie: people decide! React with ✅ Keep or ❌ Replace within 45 s. One vote each: your"
        " newest reaction still on the card counts.",
        "People so far: ✅ Keep 0 · ❌ Replace 1",
    ]
    assert discord_card(CASES["before the voters answer"])[1:] == [
        "🌿 Vera Stone — thinking…",
        "If the observers tie, people decide: react with ✅ Keep or ❌ Replace.",
    ]
    proposals = discord_card(CASES["a tie among some proposals"])
    assert proposals[2:4] == [
        "🌿 Vera Stone abstains — Neither.",
        "It's a tie between 1️⃣ Ada Quill's proposal and 2️⃣ Basil Thorne's proposal: people decide!"
        " React with one of them within 45 s; the other options don't count. One vote each: your"
        " newest reaction still on the card counts.",
    ]
    assert discord_card(CASES["people vote too"])[2].startswith(
        "People vote too: react with ✅ Keep or ❌ Replace within 45 s; the people's majority counts as"
    )
    assert discord_card(CASES["an audience with no AI voters"])[0].startswith(
        "Vote now: react with ✅ Keep or ❌ Replace within 45 s."
    )
    assert discord_card(CASES["the result"])[1:] == [
        "🌿 Vera Stone — no vote",
        "Result: Ada Quill is replaced",
        "AI: ✅ Keep 1 · ❌ Replace 1",
        "People: ✅ Keep 0 · ❌ Replace 1",
    ]
    clicks = slack_card(CASES["a defaulted vote, then a tie for the people"], buttons=True)
    assert "React" not in " ".join(clicks) and "One vote each: your last click counts." in clicks[2]
