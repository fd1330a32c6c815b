"""The cards of a debate in Slack, as mrkdwn and Block Kit (pure): the opening card the thread hangs
from, a vote card per ballot, and the closing statistics card. Everything from a person or a model is
escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from adapters.ballot_words import clicking
from adapters.card_text import Markup, either, figures, how_to_take_part, role_text, settings_text
from adapters.results import ending_text
from adapters.slack.controls.blocks import card_controls
from adapters.slack.render.blocks import MAX_BLOCKS, capped, context, section, sections
from adapters.slack.render.emoji import option_mark, option_reactions
from adapters.slack.render.ops import Block
from adapters.slack.render.text import escape, model_text
from core.events import DebateCompleted, DebateStarted
from core.models import CastMember, Statistics, VoteOption


def options_text(options: Sequence[VoteOption]) -> str:
    """How to react for each option: `✅ Keep or ❌ Replace` (the Slack reaction, then the label)."""
    reactions = option_reactions(options)
    return either([f"{option_mark(o, reactions[o.key])} {escape(o.label)}" for o in options])


# --- the opening card ------------------------------------------------------------------------------


SLACK_MARKUP = Markup(
    strong=lambda text: f"*{text}*",
    escape=escape,
    choices=lambda o: options_text(o),
    em=lambda text: f"_{text}_",
    model=model_text,
)


def how_to_vote(fmt: str, settings: Mapping[str, Any], cast: Sequence[CastMember] = ()) -> str | None:
    """The opening card's word on voting, for the format and its settings (adapters/card_text.py)."""
    taking_part = how_to_take_part(fmt, settings, cast, SLACK_MARKUP)
    return None if taking_part is None else f"*{taking_part[0]}:* {taking_part[1]}"


def opening_card(
    *,
    topic: str,
    fmt: str,
    status: str,
    cast: tuple[CastMember, ...] = (),
    settings: Mapping[str, Any] | None = None,
    live: bool = True,
    buttons: bool = False,
) -> tuple[str, tuple[Block, ...]]:
    """The channel message the debate's thread hangs from: topic, format, cast, how to vote, status,
    and its buttons (Stop and Status only while `live`)."""
    settings = settings or {}
    about = " · ".join([f"Format *{escape(fmt)}*", *settings_text(fmt, settings, escape)])
    blocks: list[Block] = [section(f"*🎤 Debate:* {escape(topic)}"), context(about)]
    if cast:
        blocks.extend(
            sections(
                [
                    f"{m.persona.emoji} *{escape(m.persona.name)}* — {escape(role_text(fmt, m, settings))}"
                    for m in cast
                ]
            )
        )
    voting = how_to_vote(fmt, settings, cast) if cast else None
    if voting and buttons:  # people vote with the vote cards' buttons (adapters/ballot_words.py)
        voting = clicking(voting)
    if voting:
        blocks.append(section(voting))
    blocks.append(context(status))
    blocks = [*capped(blocks)][: MAX_BLOCKS - 1]
    blocks.append(card_controls(live=live))  # adapters/slack/controls/blocks.py
    return f"Debate: {escape(topic)}", tuple(blocks)


def pending_card(topic: str, fmt: str) -> tuple[str, tuple[Block, ...]]:
    """The opening card before the debate has started (posted first, so the thread exists)."""
    return opening_card(topic=topic, fmt=fmt, status="⏳ Seating the cast…")


# --- the closing card ----------------------------------------------------------------------------


def stats_table(stats: Statistics) -> str:
    judged = any(p.judged for p in stats.per_persona)
    header = ["Persona", "Turns", "Words"] + (["Judged", "Keep", "Replace"] if judged else [])
    rows = [header]
    for p in stats.per_persona:
        row = [p.persona.name[:20], str(p.turns), str(p.words)]
        if judged:
            row += [str(p.judged), str(p.votes_keep), str(p.votes_replace)]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row))
        for row in rows
    ]
    return escape("\n".join(lines))


def closing_card(
    event: DebateCompleted, started: DebateStarted | None, *, last_moderator_text: str
) -> tuple[str, tuple[Block, ...]]:
    """The end: why it ended, the summary when the moderator's last turn did not already say it,
    and the statistics."""
    ending = escape(ending_text(event))
    blocks: list[Block] = [section(f"*🏁 The end* · {ending}")]
    summary = event.summary.strip()
    if summary and summary != last_moderator_text.strip():
        blocks.extend(sections(["*Summary*", *model_text(summary).split("\n")]))
    blocks.append(section(f"*Statistics*\n```{stats_table(event.stats)}```"))
    blocks.append(context(" · ".join(figures(event.stats, started))))
    return f"The end: {ending}", capped(blocks)
