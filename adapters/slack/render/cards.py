"""The cards of a debate in Slack, as mrkdwn and Block Kit (pure): the opening card the thread hangs
from, a vote card per ballot, and the closing statistics card. Everything from a person or a model is
escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from adapters.ballot_words import clicking
from adapters.card_text import either, plural
from adapters.results import ENDINGS
from adapters.slack.ballots.windows import span
from adapters.slack.controls.blocks import card_controls
from adapters.slack.render.blocks import MAX_BLOCKS, capped, context, section, sections
from adapters.slack.render.emoji import option_mark, option_reactions
from adapters.slack.render.ops import Block
from adapters.slack.render.text import escape, model_text
from core.events import DebateCompleted
from core.formats.arena import OPTIONS as ARENA_OPTIONS
from core.formats.council import EMOJIS as COUNCIL_EMOJIS
from core.formats.oxford import AUDIENCE_OPTIONS
from core.models import CastMember, Statistics, VoteOption
from core.pricing import cost_suffix
from core.transcript import minutes

ROLE_TEXT = {
    "proposition": "for the motion",
    "opposition": "against the motion",
    "observer": "observes and votes",
    "moderator": "moderates",
    "judge": "judges (reading the debate anonymised)",
    "proposer": "for the motion",
    "critic": "against the motion, steelmanning the proposer first",
    "council": "proposes, revises and votes",
    "panellist": "answers from their own document",
    "synthesiser": "writes the final answer",
}
HUMANS_TEXT = {
    "off": "AI votes only",
    "tiebreak": "people break ties",
    "vote": "people vote too",
}
STRATEGY_TEXT = {
    "majority": "the most votes wins",
    "weighted": "votes weighted by expertise",
    "consensus": "seeking consensus, else by majority",
    "moderator": "the moderator decides, the votes advise",
}
ONE_VOTE_EACH = "One vote each: your newest reaction still on the card counts."
HOW_TO_VOTE = {
    "off": "*Voting:* the AI voters decide on the vote cards in the thread; people watch.",
    "tiebreak": "*How to vote:* when the AI voters tie on a vote card in the thread, you decide: react"
    f" on the card with one of its emoji. {ONE_VOTE_EACH}",
    "vote": f"*How to vote:* react on the vote cards in the thread with one of their emoji. {ONE_VOTE_EACH}",
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


def _role_text(fmt: str, member: CastMember, settings: Mapping[str, Any]) -> str:
    role = member.role
    if fmt == "panel" and role == "panellist":
        for document in settings.get("documents") or []:
            if isinstance(document, Mapping) and document.get("panellist") == member.persona.id:
                chars = document.get("chars")
                size = f", {chars:,} characters" if isinstance(chars, int) else ""
                return f"answers from {escape(str(document.get('name', '')))}{size}"
    if fmt == "council" and role == "council" and settings.get("strategy") == "weighted":
        weights = settings.get("weights")
        weight = weights.get(member.persona.id) if isinstance(weights, Mapping) else None
        if isinstance(weight, int | float):
            return f"{ROLE_TEXT['council']} (expertise weight {weight:g})"
    if fmt == "council" and role == "moderator":
        return "picks the proposal the council adopts"
    if fmt == "oxford" and role == "moderator":
        return "frames the focus question and distils each round"
    return escape(ROLE_TEXT.get(role, role))


def how_to_vote(fmt: str, settings: Mapping[str, Any], cast: Sequence[CastMember] = ()) -> str | None:
    """The opening card's word on voting, for the format and its settings."""
    humans = settings.get("humans")
    window = settings.get("human_window")
    within = f" within {span(window)}" if isinstance(window, int) else ""
    if fmt == "arena":
        choices = options_text(ARENA_OPTIONS)
        lead = "After each round but the last the observers vote on whether the speaker keeps the floor"
        if humans == "tiebreak":
            return (
                f"*How to vote:* {lead}. If they tie, *you decide*: react on the vote card with"
                f" {choices}{within}. {ONE_VOTE_EACH}"
            )
        if humans == "vote":
            return (
                f"*How to vote:* {lead}, and *you vote too*: react on the vote card with {choices}"
                f"{within}; the people's majority counts as one more vote. {ONE_VOTE_EACH}"
            )
        return f"*Voting:* {lead}; only they decide, people watch."
    if fmt == "oxford":
        if humans == "vote":
            return (
                "*How to vote:* you are the audience. Vote on the motion before the debate and again"
                f" after the verdict: react on each audience card with {options_text(AUDIENCE_OPTIONS)}"
                f"{within}. The side that gains the most votes wins the audience, beside the judge's"
                f" verdict. {ONE_VOTE_EACH}"
            )
        return "*Voting:* no audience vote this time; the judge rules."
    if fmt == "council":
        numbers = ", ".join(COUNCIL_EMOJIS[:3])
        lead = "The members vote on the proposals (or abstain) on a vote card"
        if humans == "tiebreak":
            return (
                f"*How to vote:* {lead}. If they tie, *you break the tie*: react with a tied"
                f" proposal's number ({numbers}, …){within}; the card says which proposals are"
                f" tied, and only those count. {ONE_VOTE_EACH}"
            )
        return f"*Voting:* {lead}; only they decide, and a tie goes to the earliest proposal."
    if fmt == "panel":
        synthesiser = next((m.persona.name for m in cast if m.role == "synthesiser"), "the synthesiser")
        return (
            "*Nothing to vote on:* each panellist answers from their own document, and every quote is"
            f" checked against it (✔ verified, ✘ not found). Then {escape(synthesiser)} writes the"
            " final answer; the questions and answers come as a Markdown file at the end."
        )
    if isinstance(humans, str):
        return HOW_TO_VOTE.get(humans)
    return None


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
                    f"{m.persona.emoji} *{escape(m.persona.name)}* — {_role_text(fmt, m, settings)}"
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
