"""The vote card in Discord: its words (adapters/vote_card_text.py) on an embed coloured by the result."""

from __future__ import annotations

from datetime import timedelta

from adapters.ballot_card import BallotCard
from adapters.discord.render.cards import (
    BLURPLE,
    DESCRIPTION_LIMIT,
    DISCORD_MARKUP,
    GREEN,
    GREY,
    RED,
    TITLE_LIMIT,
    clip,
    timestamp,
)
from adapters.discord.render.ops import Card
from adapters.vote_card_text import ai_lines, people_lines, result_lines

CLOSED_TO_PEOPLE = "closed: reactions no longer count"
_DECISION_COLOR = {"keep": GREEN, "replace": RED, "for": GREEN, "against": RED}


def vote_card(view: BallotCard, *, buttons: bool = False) -> Card:
    """`buttons`: people vote with the card's buttons (adapters/discord/ballots/buttons.py)."""
    started = view.started
    lines = ai_lines(view, DISCORD_MARKUP)
    closes = ""
    if view.window is not None:
        closes = f" · voting closes {timestamp(view.window.at + timedelta(seconds=view.window.window))}"
    people = people_lines(view, DISCORD_MARKUP, closes=closes, buttons=buttons)
    if people:
        lines += ["", *people]
    closed = view.closed
    if closed is not None:
        lines += ["", *result_lines(view, DISCORD_MARKUP)]
    color = BLURPLE if closed is None else _DECISION_COLOR.get(closed.decision, GREY)
    state = "open" if closed is None else "closed" if started.humans == "off" else CLOSED_TO_PEOPLE
    return Card(
        title=clip(f"🗳️ {started.title}", TITLE_LIMIT),
        description=clip("\n".join(lines).strip("\n"), DESCRIPTION_LIMIT),
        color=color,
        footer=f"Vote {started.vote_id} · {state}",
    )
