"""The same vote events give the same people's counts on a Discord card and on a Slack card: both
keep the card's state by one rule (adapters/ballot_card.py), each drawing it in its own terms. A
person's newer vote replaces theirs, a withdrawal removes it, AI votes are not people's, and a tie's
window counts only the tied options."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from adapters.discord.render.events import DiscordView
from adapters.discord.render.ops import Show
from adapters.slack.render.events import SlackView
from adapters.slack.render.ops import Update
from core.events import Event, HumanVoteOpened, VoteCast, VoteWithdrawn, VotingStarted
from core.models import PersonaRef, VoteOption, Voter

BASIL = PersonaRef(id="basil", name="Basil Thorne", emoji="🦉")
OPTIONS = (
    VoteOption(key="a", label="Trams", emoji="🚋"),
    VoteOption(key="b", label="Bikes", emoji="🚲"),
    VoteOption(key="c", label="Buses", emoji="🚌"),
)
AT = datetime(2030, 1, 1, tzinfo=UTC)


def person(n: int) -> Voter:
    return Voter(id=str(n), name=f"p{n}", human=True)


def cast(voter: Voter, choice: str) -> VoteCast:
    return VoteCast(vote_id="v1", voter=voter, choice=choice, at=AT)


def withdrawn(voter: Voter) -> VoteWithdrawn:
    return VoteWithdrawn(vote_id="v1", voter=voter, at=AT)


def opened(*keys: str, reason: str = "vote") -> HumanVoteOpened:
    options = tuple(o for o in OPTIONS if o.key in keys)
    return HumanVoteOpened(vote_id="v1", options=options, window=30, reason=reason, at=AT)


SEQUENCES: dict[str, tuple[list[Event], dict[str, int]]] = {
    "a newer vote replaces, a withdrawal removes": (
        [
            opened("a", "b", "c"),
            cast(person(1), "a"),
            cast(person(1), "b"),
            cast(person(2), "c"),
            withdrawn(person(2)),
            cast(person(3), "b"),
        ],
        {"Trams": 0, "Bikes": 2, "Buses": 0},
    ),
    "AI votes are not the people's": (
        [cast(Voter.of(BASIL), "a"), opened("a", "b", "c"), cast(person(1), "c")],
        {"Trams": 0, "Bikes": 0, "Buses": 1},
    ),
    "a tie's window counts only the tied options": (
        [opened("a", "c", reason="tie"), cast(person(1), "a"), cast(person(2), "c"), cast(person(3), "c")],
        {"Trams": 1, "Buses": 2},
    ),
    "a withdrawal of a vote never cast changes nothing": (
        [opened("a", "b", "c"), withdrawn(person(9)), cast(person(1), "a")],
        {"Trams": 1, "Bikes": 0, "Buses": 0},
    ),
}


def _counts(line: str) -> dict[str, int]:
    """The people's counts a card's tally line shows, by option label."""
    return {label: int(n) for label, n in re.findall(r"(Trams|Bikes|Buses) (\d+)", line)}


def _people_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(("People:", "People so far:")))


def _discord(events: list[Event]) -> dict[str, int]:
    view = DiscordView(streaming=False)
    ops = [op for event in [_started(), *events] for op in view.render(event)]
    card = [op for op in ops if isinstance(op, Show)][-1].posts[0].cards[0]
    return _counts(_people_line(card.description))


def _slack(events: list[Event]) -> dict[str, int]:
    view = SlackView(streaming=False, limit=4000)
    ops = [op for event in [_started(), *events] for op in view.render(event)]
    card = [op for op in ops if isinstance(op, Update)][-1]
    text = "\n".join(
        str(e.get("text", "")) for b in card.blocks for e in [b.get("text") or {}, *b.get("elements", [])]
    )
    return _counts(_people_line(text))


def _started() -> VotingStarted:
    return VotingStarted(
        vote_id="v1",
        title="Which way to work?",
        subject=None,
        options=OPTIONS,
        voters=(BASIL,),
        humans="vote",
    )


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_both_cards_show_the_same_peoples_counts(name: str) -> None:
    events, expected = SEQUENCES[name]
    assert _discord(events) == expected
    assert _slack(events) == expected
