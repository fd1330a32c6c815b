"""The cards (embeds) and lines the bot posts, built from core values. Pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from discord.utils import escape_markdown

from adapters.card_text import either, plural
from adapters.discord.render.ops import Card, CardAuthor, CardField, Post
from core.events import (
    DebateCompleted,
    DebateStarted,
    Notice,
    SpeakerSwitched,
    Verdict,
)
from core.formats import FORMATS
from core.formats.arena import OPTIONS as ARENA_OPTIONS
from core.formats.oxford import AUDIENCE_OPTIONS
from core.models import CastMember, PersonaRef, Statistics, VoteOption
from core.pricing import cost_suffix
from core.transcript import minutes

TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_LIMIT = 1024
FOOTER_LIMIT = 2048

BLURPLE = 0x5865F2
GREEN = 0x57F287
RED = 0xED4245
GREY = 0x95A5A6
YELLOW = 0xFEE75C

_COLORS = {
    "black": 0x23272A,
    "red": 0xE74C3C,
    "green": 0x2ECC71,
    "yellow": 0xF1C40F,
    "blue": 0x3498DB,
    "magenta": 0x9B59B6,
    "cyan": 0x1ABC9C,
    "white": 0xECF0F1,
}
_BRIGHT = {
    "red": 0xFF6B6B,
    "green": 0x7BED9F,
    "yellow": 0xFFE066,
    "blue": 0x70A1FF,
    "magenta": 0xE056FD,
    "cyan": 0x7EE8FA,
    "white": 0xFFFFFF,
    "black": 0x57606F,
}
_ROLE_TEXT = {
    "proposition": "speaks for the motion",
    "observer": "observes and votes",
    "opposition": "argues against",
    "moderator": "moderates and sums up",
    "proposer": "argues for the motion",
    "critic": "argues against, steelmanning the proposer first",
    "judge": "rules on the debate (reading it anonymised)",
    "council": "proposes, revises and votes",
    "panellist": "answers from their own document",
    "synthesiser": "writes the final answer",
}
_STRATEGY_TEXT = {
    "majority": "the most votes wins",
    "weighted": "votes weighted by expertise",
    "consensus": "seeking consensus, else by majority",
    "moderator": "the moderator decides, the votes advise",
}
_NOTICE_MARK = {"info": "ℹ️", "warning": "⚠️", "error": "❌"}


def md(text: str) -> str:
    """Text a person wrote (a topic), shown as written: its Markdown and masked links escaped."""
    return escape_markdown(text)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def color_of(name: str) -> int:
    """A persona's colour (a terminal colour name in config) as an embed colour."""
    key = name.strip().lower()
    if key.startswith("bright_"):
        return _BRIGHT.get(key.removeprefix("bright_"), BLURPLE)
    return _COLORS.get(key, BLURPLE)


def persona_label(ref: PersonaRef) -> str:
    return f"{ref.emoji} **{ref.name}**"


def option_label(option: VoteOption) -> str:
    return f"{option.emoji} {option.label}"


def timestamp(at: datetime, style: str = "R") -> str:
    """A Discord timestamp: every reader sees it in their own time zone."""
    return f"<t:{int(at.timestamp())}:{style}>"


# --- opening and closing ----------------------------------------------------------------------


def _options_text(options: Sequence[VoteOption], joiner: str = "or") -> str:
    return either([f"{o.emoji} {o.label.lower()}" for o in options], joiner)


def _within(settings: Mapping[str, Any]) -> str:
    window = settings.get("human_window")
    return f" within {window} s" if window else ""


def _role_text(event: DebateStarted, member: CastMember) -> str:
    settings = event.settings
    role = member.role
    if event.format == "panel" and role == "panellist":
        documents = settings.get("documents") or []
        names = [
            d.get("name")
            for d in documents
            if isinstance(d, dict) and d.get("panellist") == member.persona.id
        ]
        return f"answers from {names[0]}" if names and names[0] else _ROLE_TEXT["panellist"]
    if event.format == "council":
        if role == "council" and settings.get("strategy") == "weighted":
            weights = settings.get("weights") or {}
            weight = weights.get(member.persona.id) if isinstance(weights, dict) else None
            if isinstance(weight, int | float):
                return f"{_ROLE_TEXT['council']} (expertise weight {weight:g})"
        if role == "moderator":
            return "picks the proposal the council adopts"
    if event.format == "oxford" and role == "moderator":
        return "frames the focus question and distils each round"
    return _ROLE_TEXT.get(role, role)


def _every(exchanges: object) -> str:
    if exchanges == 1 or not isinstance(exchanges, int):
        return "After each exchange but the last"
    return f"After every {exchanges} exchanges but the last"


def how_to_take_part(event: DebateStarted) -> tuple[str, str] | None:
    """The opening card's word on voting (field name, text), from the format and its settings."""
    settings = event.settings
    humans = settings.get("humans")
    within = _within(settings)
    if event.format == "arena":
        choices = _options_text(ARENA_OPTIONS)
        every = _every(settings.get("exchanges_per_round"))
        lead = f"{every} the observers vote on the speaker ({choices}), live on a vote card."
        if humans == "tiebreak":
            return (
                "How to vote",
                f"{lead} If they tie, **you decide**: react {choices} on the vote card{within}.",
            )
        if humans == "vote":
            return "How to vote", (
                f"{lead} **You vote too**: react {choices} on each vote card{within}; the people's"
                " majority counts as one more vote."
            )
        return "Who decides", f"{lead} Only the observers decide in this debate; people watch."
    if event.format == "oxford":
        if humans == "vote":
            choices = _options_text(AUDIENCE_OPTIONS)
            return "How to vote", (
                f"**You are the audience**: vote on the motion before the debate and again after the"
                f" verdict, reacting {choices} on each audience card{within}. The side that gains the"
                " most votes wins the audience, shown beside the judge's verdict."
            )
        return "Who decides", "The judge rules on the debate; there is no audience vote this time."
    if event.format == "council":
        strategy = str(settings.get("strategy", "majority"))
        how = _STRATEGY_TEXT.get(strategy, strategy)
        lead = f"The members vote on the proposals ({how}), live on a vote card."
        if humans == "tiebreak":
            return "How to vote", (
                f"{lead} If they tie, **you break the tie**: react with a tied proposal's number"
                f" (1️⃣, 2️⃣, …) on the vote card{within}; the card says which proposals are tied."
            )
        return "Who decides", f"{lead} Only the members decide in this debate; people watch."
    if event.format == "panel":
        synthesiser = next((m.persona.name for m in event.cast if m.role == "synthesiser"), "the synthesiser")
        return "How it works", (
            "Nothing to vote on: each panellist answers from their own document, and every quote is"
            f" checked against it (✔ verified, ✘ not found). Then {synthesiser} writes the final"
            " answer, and the questions and answers come as a Markdown file at the end."
        )
    if humans in ("tiebreak", "vote"):
        return "How to vote", f"React on the vote cards{within} with one of their emoji."
    return None


def clock_line(elapsed: float, remaining: float | None, paused: bool) -> str:
    left = f" · {minutes(remaining)} left" if remaining is not None else ""
    state = " · paused for a vote" if paused else ""
    return f"⏱ {minutes(elapsed)} elapsed{left}{state}"


def opening_card(event: DebateStarted, *, status: str = "") -> Card:
    fmt = FORMATS.get(event.format)
    about = f"**Format:** {event.format}" + (f" — {fmt.description}" if fmt is not None else "")
    cast = "\n".join(f"{persona_label(m.persona)} — {_role_text(event, m)}" for m in event.cast)
    settings = event.settings
    footer = f"Rostra · {event.format}"
    if "duration" in settings:
        footer += f" · {minutes(float(settings['duration']))} of debate"
    footer += " · /debate status · /debate stop"
    if status:
        footer = f"{status}\n{footer}"
    fields = [CardField("Cast", clip(cast, FIELD_LIMIT))] if cast else []
    taking_part = how_to_take_part(event)
    if taking_part is not None:
        fields.append(CardField(taking_part[0], clip(taking_part[1], FIELD_LIMIT)))
    return Card(
        title=clip(f"🎙️ {md(event.topic)}", TITLE_LIMIT),
        description=clip(
            f"{md(event.topic)}\n\n{about}" if len(event.topic) > 200 else about, DESCRIPTION_LIMIT
        ),
        color=BLURPLE,
        fields=tuple(fields),
        footer=clip(footer, FOOTER_LIMIT),
    )


def stats_lines(stats: Statistics) -> list[str]:
    lines = []
    for p in stats.per_persona:
        parts = [plural(p.turns, "turn"), plural(p.words, "word")]
        if p.judged:
            parts.append(f"judged {p.judged}× (✅ {p.votes_keep} · ❌ {p.votes_replace})")
        lines.append(f"{persona_label(p.persona)} · " + " · ".join(parts))
    return lines


def stats_summary(stats: Statistics, fmt: str = "") -> str:
    """The closing figures that mean something for the format (no switches outside the arena...)."""
    counts = [plural(stats.rounds, "round")] if stats.rounds else []
    counts += [plural(stats.turns, "turn"), plural(stats.words, "word")]
    if stats.votes or fmt in ("arena", "council"):
        counts.append(plural(stats.votes, "AI vote"))
    if stats.human_votes or fmt in ("arena", "oxford", "council"):
        counts.append(plural(stats.human_votes, "human vote"))
    if stats.switches or fmt == "arena":
        counts.append(plural(stats.switches, "switch") + stats.switch_deciders())
    time = f"Debate time {minutes(stats.debate_seconds)}"
    if stats.paused_seconds:
        time += f" (+{minutes(stats.paused_seconds)} paused for votes)"
    return " · ".join(counts) + f"\n{time} · {stats.tokens.total:,} tokens{cost_suffix(stats.tokens)}"


def ending_text(event: DebateCompleted) -> str:
    return event.detail or event.reason.replace("_", " ")


def closing_card(event: DebateCompleted, topic: str, *, summary: str | None, fmt: str = "") -> Card:
    fields = [CardField("Who spoke", clip("\n".join(stats_lines(event.stats)) or "nobody", FIELD_LIMIT))]
    fields.append(CardField("Figures", clip(stats_summary(event.stats, fmt), FIELD_LIMIT)))
    description = f"**Ended:** {ending_text(event)}"
    if summary:
        description += f"\n\n**Summary**\n{summary}"
    return Card(
        title=clip(f"🏁 Debate over: {md(topic)}", TITLE_LIMIT),
        description=clip(description, DESCRIPTION_LIMIT),
        color=GREY if event.reason in ("stopped", "failed", "interrupted") else GREEN,
        fields=tuple(fields),
        footer=f"Debate {event.debate_id} · /debate transcript gets the full text",
    )


# --- everything else ----------------------------------------------------------------------------


def switch_text(event: SpeakerSwitched) -> str:
    return (
        f"🔁 {persona_label(event.old)} steps down; {persona_label(event.new)} takes the floor"
        f" ({event.reason})."
    )


def notice_text(event: Notice) -> str:
    return f"{_NOTICE_MARK[event.level]} {event.message}"


def verdict_card(
    event: Verdict, *, tally_labels: Mapping[str, str] | None = None, abstained: Sequence[str] = ()
) -> Card:
    """A ruling: the judge's (each round, then final), the audience's, or the council's decision.

    `tally_labels` (option key → label) puts the tally on the card; `abstained` names who abstained.
    """
    by = f" · {event.by.emoji} {event.by.name}" if event.by else ""
    lines = [f"**{event.winner_label}**"]
    if tally_labels is not None and event.tally:
        lines.append(
            "Votes: " + " · ".join(f"{tally_labels.get(k, k)} {v:g}" for k, v in event.tally.items())
        )
    if abstained:
        lines.append(f"Abstained: {', '.join(abstained)}")
    if event.reasoning:
        lines += ["", event.reasoning]
    return Card(
        title=clip(f"⚖️ {event.title}{by}", TITLE_LIMIT),
        description=clip("\n".join(lines), DESCRIPTION_LIMIT),
        color=YELLOW if event.final else GREY,
    )


def as_bot_post(post: Post) -> Post:
    """A persona's message as the bot's own (no webhook): the persona as the embed author."""
    persona = post.persona
    if persona is None:
        return post
    card = Card(
        description=clip(post.content, DESCRIPTION_LIMIT),
        color=color_of(persona.color),
        author=CardAuthor(name=persona.name, icon_url=persona.avatar_url),
    )
    return replace(post, content="", persona=None, cards=(card, *post.cards))


def personas_card(personas: Iterable[tuple[PersonaRef, str, str]]) -> Card:
    """The cast from config: (persona, seat, voice) triples."""
    lines = [f"{persona_label(p)} (`{p.id}`) — {seat}\n-# {clip(voice, 160)}" for p, seat, voice in personas]
    return Card(title="🎭 The cast", description=clip("\n".join(lines), DESCRIPTION_LIMIT), color=BLURPLE)
