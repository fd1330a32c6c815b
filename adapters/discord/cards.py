"""The cards (embeds) and lines the bot posts, built from core values. Pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from adapters.discord.outgoing import Card, CardAuthor, CardField, Post
from core.events import (
    DebateCompleted,
    DebateStarted,
    Notice,
    SpeakerSwitched,
    Verdict,
)
from core.formats import FORMATS
from core.models import PersonaRef, Statistics, VoteOption
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
}
_NOTICE_MARK = {"info": "ℹ️", "warning": "⚠️", "error": "❌"}


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


def how_to_vote(settings: Mapping[str, Any]) -> str:
    """How people take part, from the debate's settings ("" for a format without votes)."""
    humans = settings.get("humans")
    exchanges = settings.get("exchanges_per_round")
    if humans is None and exchanges is None:
        return ""
    window = settings.get("human_window")
    within = f" within {window} s" if window else ""
    if exchanges is not None:
        lead = f"After every {exchanges} exchanges the observers vote on the speaker, live on a vote card."
    else:
        lead = "Votes appear live on vote cards."
    if humans == "tiebreak":
        return f"{lead} If the AI voters tie, **you decide**: react on the vote card{within}."
    if humans == "vote":
        extra = " The people's majority counts as one more vote." if exchanges is not None else ""
        return f"{lead} **You vote too**: react on each vote card{within}.{extra}"
    return f"{lead} Only the AI voters decide in this debate."


def clock_line(elapsed: float, remaining: float | None, paused: bool) -> str:
    left = f" · {minutes(remaining)} left" if remaining is not None else ""
    state = " · paused for a vote" if paused else ""
    return f"⏱ {minutes(elapsed)} elapsed{left}{state}"


def opening_card(event: DebateStarted, *, status: str = "") -> Card:
    fmt = FORMATS.get(event.format)
    about = f"**Format:** {event.format}" + (f" — {fmt.description}" if fmt is not None else "")
    cast = "\n".join(f"{persona_label(m.persona)} — {_ROLE_TEXT.get(m.role, m.role)}" for m in event.cast)
    settings = event.settings
    footer = f"Rostra · {event.format}"
    if "duration" in settings:
        footer += f" · {minutes(float(settings['duration']))} of debate"
    footer += " · /debate status · /debate stop"
    if status:
        footer = f"{status}\n{footer}"
    return Card(
        title=clip(f"🎙️ {event.topic}", TITLE_LIMIT),
        description=clip(f"{event.topic}\n\n{about}" if len(event.topic) > 200 else about, DESCRIPTION_LIMIT),
        color=BLURPLE,
        fields=tuple(
            CardField(name, clip(value, FIELD_LIMIT))
            for name, value in (("Cast", cast), ("How to vote", how_to_vote(settings)))
            if value
        ),
        footer=clip(footer, FOOTER_LIMIT),
    )


def stats_lines(stats: Statistics) -> list[str]:
    lines = []
    for p in stats.per_persona:
        parts = [f"{p.turns} turns", f"{p.words} words"]
        if p.judged:
            parts.append(f"judged {p.judged}× (✅ {p.votes_keep} · ❌ {p.votes_replace})")
        lines.append(f"{persona_label(p.persona)} · " + " · ".join(parts))
    return lines


def stats_summary(stats: Statistics) -> str:
    return (
        f"{stats.rounds} rounds · {stats.turns} turns · {stats.words} words · {stats.votes} AI votes"
        f" · {stats.human_votes} human votes · {stats.switches} switches\n"
        f"Debate time {minutes(stats.debate_seconds)} (+{minutes(stats.paused_seconds)} paused for votes)"
        f" · {stats.tokens.total:,} tokens"
    )


def ending_text(event: DebateCompleted) -> str:
    return event.detail or event.reason.replace("_", " ")


def closing_card(event: DebateCompleted, topic: str, *, summary: str | None) -> Card:
    fields = [CardField("Who spoke", clip("\n".join(stats_lines(event.stats)) or "nobody", FIELD_LIMIT))]
    fields.append(CardField("Figures", clip(stats_summary(event.stats), FIELD_LIMIT)))
    description = f"**Ended:** {ending_text(event)}"
    if summary:
        description += f"\n\n**Summary**\n{summary}"
    return Card(
        title=clip(f"🏁 Debate over: {topic}", TITLE_LIMIT),
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


def verdict_card(event: Verdict) -> Card:
    by = f" · {event.by.emoji} {event.by.name}" if event.by else ""
    body = f"**{event.winner_label}**"
    if event.reasoning:
        body += f"\n\n{event.reasoning}"
    return Card(
        title=clip(f"⚖️ {event.title}{by}", TITLE_LIMIT),
        description=clip(body, DESCRIPTION_LIMIT),
        color=YELLOW,
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
    return Post(cards=(card, *post.cards), attachment=post.attachment)


def personas_card(personas: Iterable[tuple[PersonaRef, str, str]]) -> Card:
    """The cast from config: (persona, seat, voice) triples."""
    lines = [f"{persona_label(p)} (`{p.id}`) — {seat}\n-# {clip(voice, 160)}" for p, seat, voice in personas]
    return Card(title="🎭 The cast", description=clip("\n".join(lines), DESCRIPTION_LIMIT), color=BLURPLE)
