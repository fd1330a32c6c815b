"""The vote card in Slack (pure): every AI vote as it arrives, the people's window, countdown and
tally, then the result; with the card's buttons when people vote by clicking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from adapters.ballot_card import BallotCard
from adapters.card_text import either
from adapters.slack.ballots.buttons.blocks import ballot_block
from adapters.slack.ballots.windows import closes_at, span, time_left
from adapters.slack.render.blocks import MAX_BLOCKS, capped, context, section, sections
from adapters.slack.render.emoji import option_mark
from adapters.slack.render.ops import Block
from adapters.slack.render.text import escape
from core.events import VoteCast
from core.formats.council import ABSTAIN
from core.models import PersonaRef


@dataclass
class BallotView(BallotCard):
    """What a vote card shows (adapters/ballot_card.py), with the reaction each option is voted by."""

    reactions: dict[str, str] = field(default_factory=dict)  # option key → emoji name

    def choice_text(self, key: str) -> str:
        option = self.option(key)
        if option is None:
            return escape(key)
        return f"{option_mark(option, self.reactions[key])} {escape(option.label)}"

    @property
    def open_keys(self) -> list[str]:
        """The options people may vote for: during a tie, only the tied ones."""
        return [o.key for o in self.open_options if self.option(o.key) is not None]

    @property
    def narrowed(self) -> bool:
        return len(self.open_keys) < len(self.started.options)

    def marks(self, keys: Sequence[str] | None = None, joiner: str = "or") -> str:
        return either([self.choice_text(k) for k in (self.open_keys if keys is None else keys)], joiner)

    def tally_text(self, tally: Mapping[str, float], keys: Sequence[str] | None = None) -> str:
        if keys is None:
            keys = [o.key for o in self.started.options] + [k for k in tally if self.option(k) is None]
        return " · ".join(f"{self.choice_text(k)} {tally.get(k, 0):g}" for k in keys)


def _ai_line(ballot: BallotView, voter: PersonaRef | None, vote: VoteCast | None) -> str:
    if vote is not None:
        who = f"{vote.voter.emoji} *{escape(vote.voter.name)}*".strip()
        if vote.choice == ABSTAIN and ballot.option(ABSTAIN) is None:
            line = f"{who} abstains"
        else:
            line = f"{who} → {ballot.choice_text(vote.choice)}"
        if vote.reason:
            line += f" — {escape(vote.reason)}"
        return line + (" _(counted by default)_" if vote.defaulted else "")
    assert voter is not None
    waiting = "_no vote_" if ballot.closed is not None else "_thinking…_"
    return f"{voter.emoji} {escape(voter.name)} {waiting}"


def _people_line(ballot: BallotView, *, buttons: bool = False, now: datetime | None = None) -> str:
    mode = ballot.started.humans
    react, react_ = ("click", "Click") if buttons else ("react with", "React with")
    if ballot.closed is not None:
        return "Voting is closed." if mode != "off" else ""
    if ballot.window is not None:
        seconds = int(ballot.window.window)
        if ballot.window.reason == "tie" and ballot.narrowed:
            others = "the other options don't count" if buttons else "reactions for other options don't count"
            lead = (
                f"*It's a tie between {ballot.marks(joiner='and')}: people decide!* {react_} one of"
                f" them within {span(seconds)}; {others}."
            )
        elif ballot.window.reason == "tie":
            lead = f"*It's a tie: people decide!* {react_} {ballot.marks()} within {span(seconds)}."
        elif ballot.started.voters:
            lead = (
                f"*People vote too* ({seconds} s): {react} {ballot.marks()}."
                " The people's majority counts as one more vote."
            )
        else:
            lead = f"*Your vote* ({seconds} s): {react} {ballot.marks()}."
        counts = ballot.tally_text(ballot.people_tally(), ballot.open_keys)
        rule = "your last click counts" if buttons else "your newest reaction still on the card counts"
        when = closes_at(ballot.window) + time_left(ballot.window, now)
        return f"{lead} One vote each; {rule}.\nPeople so far: {counts}{when}"
    if mode == "tiebreak":
        return f"If the AI voters tie, people decide: {react} {ballot.marks()}."
    if mode == "vote":
        who = "People vote too" if ballot.started.voters else "Your vote"
        return f"{who}: {react} {ballot.marks()} when voting opens."
    return ""


def vote_card(
    ballot: BallotView, *, buttons: bool = False, now: datetime | None = None
) -> tuple[str, tuple[Block, ...]]:
    """`buttons`: people vote with the card's buttons (ballots/buttons/handlers.py), not reactions.
    `now`: the moment the card is drawn for; an open window then says how long is left."""
    started = ballot.started
    head = f"*🗳️ {escape(started.title)}*"
    if started.subject is not None:
        head += f"\nJudging {started.subject.emoji} *{escape(started.subject.name)}*"
    lines = [_ai_line(ballot, voter, ballot.ai.get(voter.id)) for voter in started.voters]
    listed = {v.id for v in started.voters}
    lines += [_ai_line(ballot, None, vote) for vid, vote in ballot.ai.items() if vid not in listed]
    blocks: list[Block] = [section(head), *sections(lines)]
    closed = ballot.closed
    if closed is not None:
        result = [f"*Result: {escape(closed.decision_label)}*"]
        if started.voters or closed.tally:
            result.append(f"AI: {ballot.tally_text(closed.tally)}")
        if any(closed.human_tally.values()) or closed.tie_broken_by == "humans" or not started.voters:
            keys = ballot.open_keys if ballot.window is not None else None
            result.append(f"People: {ballot.tally_text(closed.human_tally, keys)}")
        if closed.note:
            result.append(f"_{escape(closed.note)}_")
        blocks.append(section("\n".join(result)))
    people = _people_line(ballot, buttons=buttons, now=now)
    if people:
        blocks.append(context(people))
    if buttons and ballot.window is not None and closed is None:  # people vote with buttons
        shown = []
        for key in ballot.open_keys:
            option = ballot.option(key)
            if option is not None:
                shown.append((key, f"{option_mark(option, ballot.reactions[key])} {option.label}"))
        block = ballot_block(started.vote_id, shown, ballot.people_tally())
        blocks = [*blocks[: MAX_BLOCKS - 1], block]
    return f"Vote: {escape(started.title)}", capped(blocks)
