"""The vote card: every AI vote as it arrives, the people's window and tally, then the result."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from adapters.ballot_card import BallotCard
from adapters.discord.render.cards import (
    BLURPLE,
    DESCRIPTION_LIMIT,
    GREEN,
    GREY,
    RED,
    TITLE_LIMIT,
    clip,
    option_label,
    timestamp,
)
from adapters.discord.render.ops import Card
from core.events import HumanVoteOpened
from core.formats.council import ABSTAIN
from core.models import VoteOption

CLOSED_TO_PEOPLE = "closed: reactions no longer count"
_DECISION_COLOR = {"keep": GREEN, "replace": RED, "for": GREEN, "against": RED}


class BallotView(BallotCard):
    """What a vote card shows (adapters/ballot_card.py), its options labelled for Discord."""

    def choice_text(self, key: str) -> str:
        option = self.option(key)
        return option_label(option) if option is not None else key


def _tally_text(view: BallotView, tally: Mapping[str, float]) -> str:
    return " · ".join(f"{view.choice_text(k)} {v:g}" for k, v in tally.items())


def _choices(options: tuple[VoteOption, ...]) -> str:
    labels = [option_label(o) for o in options]
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} or {labels[-1]}"


def _voter_lines(view: BallotView) -> list[str]:
    lines = []
    voters: list[tuple[str, str]] = [(v.id, f"{v.emoji} **{v.name}**") for v in view.started.voters]
    known = {vid for vid, _ in voters}
    voters += [(vid, f"{c.voter.emoji} **{c.voter.name}**") for vid, c in view.ai.items() if vid not in known]
    for voter_id, label in voters:
        cast = view.ai.get(voter_id)
        if cast is None:
            lines.append(f"{label} — *thinking…*" if view.closed is None else f"{label} — *no vote*")
            continue
        reason = f" — *{cast.reason}*" if cast.defaulted else f" — {cast.reason}" if cast.reason else ""
        if view.option(cast.choice) is None and cast.choice == ABSTAIN:
            lines.append(f"{label} — abstains{reason}")
        else:
            lines.append(f"{label} → {view.choice_text(cast.choice)}{reason}")
    return lines


def _window_line(view: BallotView, window: HumanVoteOpened) -> str:
    ends = timestamp(window.at + timedelta(seconds=window.window))
    offered = window.options
    choices = _choices(offered)
    if window.reason == "tie":
        if len(offered) < len(view.started.options):
            tied = " and ".join(option_label(o) for o in offered)
            marks = " or ".join(o.emoji for o in offered)
            return (
                f"**It's a tie between {tied} — people decide.** React {marks}; only those count."
                f" Voting closes {ends}."
            )
        return f"**It's a tie — people decide.** React {choices}; voting closes {ends}."
    if not view.started.voters:
        return f"**Vote now:** react {choices}; voting closes {ends}."
    return f"**People vote now.** React {choices}; voting closes {ends}."


def _people_lines(view: BallotView) -> list[str]:
    """How people vote, and their tally (their own reactions only: Rostra's seeds are no votes)."""
    mode = view.started.humans
    choices = _choices(view.started.options)
    lines: list[str] = []
    if view.closed is not None:
        return lines
    voters = "observers" if view.started.subject is not None else "voters"
    if view.window is not None:
        lines.append(_window_line(view, view.window))
    elif mode == "tiebreak" and len(view.started.options) > 2:
        lines.append(f"If the {voters} tie, people decide among the tied options; this card will say which.")
    elif mode == "tiebreak":
        lines.append(f"If the {voters} tie, people decide: react {choices}.")
    elif mode == "vote" and view.started.voters:
        lines.append(f"People vote too: react {choices} once voting opens.")
    elif mode == "vote":
        lines.append(f"Voting opens in a moment: react {choices}.")
    if view.people or view.window is not None:
        lines.append(f"People: {_tally_text(view, view.people_tally())}")
    return lines


def vote_card(view: BallotView) -> Card:
    started = view.started
    lines = _voter_lines(view)
    people = _people_lines(view)
    if people:
        lines += ["", *people]
    color = BLURPLE
    closed = view.closed
    if closed is not None:
        lines += ["", f"**Result: {closed.decision_label}**"]
        if started.voters or view.ai:
            lines.append(f"AI: {_tally_text(view, closed.tally)}")
        if closed.human_tally and (view.window is not None or any(closed.human_tally.values())):
            lines.append(f"People: {_tally_text(view, closed.human_tally)}")
        if closed.note:
            lines.append(f"*{closed.note}*")
        color = _DECISION_COLOR.get(closed.decision, GREY)
    state = "open" if closed is None else "closed" if started.humans == "off" else CLOSED_TO_PEOPLE
    return Card(
        title=clip(f"🗳️ {started.title}", TITLE_LIMIT),
        description=clip("\n".join(lines).strip("\n"), DESCRIPTION_LIMIT),
        color=color,
        footer=f"Vote {started.vote_id} · {state}",
    )
