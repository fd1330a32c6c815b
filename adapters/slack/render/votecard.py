"""The vote card in Slack (pure): its words (adapters/vote_card_text.py) in Block Kit, with the
countdown Slack's cards need and the card's buttons when people vote by clicking."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from adapters.ballot_card import BallotCard
from adapters.slack.ballots.buttons.blocks import ballot_block
from adapters.slack.ballots.windows import closes_at, time_left
from adapters.slack.render.blocks import MAX_BLOCKS, capped, context, section, sections
from adapters.slack.render.cards import SLACK_MARKUP
from adapters.slack.render.emoji import option_mark
from adapters.slack.render.ops import Block
from adapters.slack.render.text import escape
from adapters.vote_card_text import ai_lines, people_lines, result_lines


@dataclass
class BallotView(BallotCard):
    """What a vote card shows (adapters/ballot_card.py), with the reaction each option is voted by."""

    reactions: dict[str, str] = field(default_factory=dict)  # option key → emoji name

    def choice_text(self, key: str) -> str:
        option = self.option(key)
        if option is None:
            return escape(key)
        return f"{option_mark(option, self.reactions[key])} {escape(option.label)}"


def vote_card(
    ballot: BallotView, *, buttons: bool = False, now: datetime | None = None
) -> tuple[str, tuple[Block, ...]]:
    """`buttons`: people vote with the card's buttons (ballots/buttons/handlers.py), not reactions.
    `now`: the moment the card is drawn for; an open window then says how long is left."""
    started = ballot.started
    head = f"*🗳️ {escape(started.title)}*"
    if started.subject is not None:
        head += f"\nJudging {started.subject.emoji} *{escape(started.subject.name)}*"
    lines = ai_lines(ballot, SLACK_MARKUP)
    blocks: list[Block] = [section(head), *sections(lines)]
    closed = ballot.closed
    if closed is not None:
        blocks.append(section("\n".join(result_lines(ballot, SLACK_MARKUP))))
    when = closes_at(ballot.window) + time_left(ballot.window, now) if ballot.window is not None else ""
    people = people_lines(ballot, SLACK_MARKUP, closes=when, buttons=buttons)
    if closed is not None and started.humans != "off":
        people = ["Voting is closed."]
    if people:
        blocks.append(context("\n".join(people)))
    if buttons and ballot.window is not None and closed is None:  # people vote with buttons
        shown = []
        for key in ballot.open_keys:
            option = ballot.option(key)
            if option is not None:
                shown.append((key, f"{option_mark(option, ballot.reactions[key])} {option.label}"))
        block = ballot_block(started.vote_id, shown, ballot.people_tally())
        blocks = [*blocks[: MAX_BLOCKS - 1], block]
    return f"Vote: {escape(started.title)}", capped(blocks)
