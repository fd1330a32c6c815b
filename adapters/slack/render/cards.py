"""The cards of a debate in Slack, as mrkdwn and Block Kit (pure): the opening card the thread hangs
from, a vote card per ballot, and the closing statistics card. Everything from a person or a model is
escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from adapters.ballot_words import clicking
from adapters.card_text import STRATEGY_TEXT, Markup, either, how_to_take_part, plural, role_text
from adapters.results import ENDINGS
from adapters.slack.controls.blocks import card_controls
from adapters.slack.render.blocks import MAX_BLOCKS, capped, context, section, sections
from adapters.slack.render.emoji import option_mark, option_reactions
from adapters.slack.render.ops import Block
from adapters.slack.render.text import escape, model_text
from core.events import DebateCompleted
from core.models import CastMember, Statistics, VoteOption
from core.pricing import cost_suffix
from core.transcript import minutes

HUMANS_TEXT = {
    "off": "AI votes only",
    "tiebreak": "people break ties",
    "vote": "people vote too",
}


def options_text(options: Sequence[VoteOption]) -> str:
    """How to react for each option: `✅ Keep or ❌ Replace` (the Slack reaction, then the label)."""
    reactions = option_reactions(options)
    return either([f"{option_mark(o, reactions[o.key])} {escape(o.label)}" for o in options])


# --- the opening card ------------------------------------------------------------------------------


def _settings_line(fmt: str, settings: Mapping[str, Any]) -> str:
    bits = [f"Format *{escape(fmt)}*"]
    humans = settings.get("humans")
    rounds = settings.get("rounds")
    if fmt == "oxford":
        if isinstance(rounds, int):
            bits.append(f"up to {plural(rounds, 'round')}, the judge rules after each")
        if settings.get("research"):
            bits.append("debaters may search the web")
        bits.append("the audience votes before and after" if humans == "vote" else "no audience vote")
        return " · ".join(bits)
    if fmt == "council":
        if isinstance(rounds, int):
            bits.append(f"{plural(rounds, 'revision round')}" if rounds else "no revision rounds")
        strategy = settings.get("strategy")
        if isinstance(strategy, str):
            bits.append(escape(STRATEGY_TEXT.get(strategy, strategy)))
        bits.append("people break ties" if humans == "tiebreak" else "a tie goes to the earliest proposal")
        return " · ".join(bits)
    if fmt == "panel":
        drawn = settings.get("generate_questions")
        source = settings.get("question_document")
        if isinstance(drawn, int) and drawn and isinstance(source, Mapping):
            bits.append(f"{plural(drawn, 'question')} drawn from {escape(str(source.get('name', '')))}")
        else:
            bits.append("one question")
        if isinstance(rounds, int):
            bits.append(f"{plural(rounds, 'round')} of responses" if rounds else "answers only, no responses")
        documents = settings.get("documents")
        if isinstance(documents, list):
            bits.append(plural(len(documents), "document"))
        return " · ".join(bits)
    if isinstance(settings.get("duration"), int | float):
        bits.append(f"{minutes(float(settings['duration']))} of debate")
    exchanges = settings.get("exchanges_per_round")
    if isinstance(exchanges, int):
        bits.append("a vote after each exchange" if exchanges == 1 else f"a vote every {exchanges} exchanges")
    rounds = rounds or settings.get("max_rounds")
    if isinstance(rounds, int):
        bits.append(f"up to {plural(rounds, 'round')}")
    if isinstance(humans, str) and humans in HUMANS_TEXT:
        bits.append(HUMANS_TEXT[humans])
    return " · ".join(bits)


SLACK_MARKUP = Markup(strong=lambda text: f"*{text}*", escape=escape, choices=lambda o: options_text(o))


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
    blocks: list[Block] = [section(f"*🎤 Debate:* {escape(topic)}"), context(_settings_line(fmt, settings))]
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


def stats_line(stats: Statistics) -> str:
    return (
        f"{plural(stats.rounds, 'round')} · {plural(stats.turns, 'turn')} · {plural(stats.words, 'word')}"
        f" · {plural(stats.votes, 'AI vote')} · {plural(stats.human_votes, 'human vote')}"
        f" · {plural(stats.switches, 'switch')}{stats.switch_deciders()} · debate time"
        f" {minutes(stats.debate_seconds)} (+{minutes(stats.paused_seconds)} paused for votes)"
        f" · {stats.tokens.total:,} tokens{cost_suffix(stats.tokens)}"
    )


def ending_text(event: DebateCompleted) -> str:
    return event.detail or ENDINGS.get(event.reason, event.reason)


def closing_card(event: DebateCompleted, *, last_moderator_text: str) -> tuple[str, tuple[Block, ...]]:
    """The end: why it ended, the summary when the moderator's last turn did not already say it,
    and the statistics."""
    ending = escape(ending_text(event))
    blocks: list[Block] = [section(f"*🏁 The end* · {ending}")]
    summary = event.summary.strip()
    if summary and summary != last_moderator_text.strip():
        blocks.extend(sections(["*Summary*", *model_text(summary).split("\n")]))
    blocks.append(section(f"*Statistics*\n```{stats_table(event.stats)}```"))
    blocks.append(context(stats_line(event.stats)))
    return f"The end: {ending}", capped(blocks)
