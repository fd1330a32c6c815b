"""The cards (embeds) and lines the bot posts, built from core values. Pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from discord.utils import escape_markdown

from adapters.card_text import Markup, either, figures, how_to_take_part, plural, role_text, settings_text
from adapters.discord.render.ops import Card, CardAuthor, CardField, Post
from adapters.results import ending_text
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


def timestamp(at: datetime, style: str = "R") -> str:
    """A Discord timestamp: every reader sees it in their own time zone."""
    return f"<t:{int(at.timestamp())}:{style}>"


# --- opening and closing ----------------------------------------------------------------------


def _options_text(options: Sequence[VoteOption], joiner: str = "or") -> str:
    return either([f"{o.emoji} {o.label.lower()}" for o in options], joiner)


DISCORD_MARKUP = Markup(
    strong=lambda text: f"**{text}**", escape=md, choices=_options_text, em=lambda text: f"*{text}*"
)


def clock_line(elapsed: float, remaining: float | None, paused: bool) -> str:
    left = f" · {minutes(remaining)} left" if remaining is not None else ""
    state = " · paused for a vote" if paused else ""
    return f"⏱ {minutes(elapsed)} elapsed{left}{state}"


def opening_card(event: DebateStarted, *, status: str = "") -> Card:
    fmt = FORMATS.get(event.format)
    about = f"**Format:** {event.format}" + (f" — {fmt.description}" if fmt is not None else "")
    settings_line = " · ".join(settings_text(event.format, event.settings, md))
    about += f"\n{settings_line}" if settings_line else ""
    cast = "\n".join(
        f"{persona_label(m.persona)} — {md(role_text(event.format, m, event.settings))}" for m in event.cast
    )
    footer = f"Rostra · {event.format} · /debate status · /debate stop"
    if status:
        footer = f"{status}\n{footer}"
    fields = [CardField("Cast", clip(cast, FIELD_LIMIT))] if cast else []
    taking_part = how_to_take_part(event.format, event.settings, event.cast, DISCORD_MARKUP)
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


def closing_card(event: DebateCompleted, started: DebateStarted | None, *, summary: str | None) -> Card:
    topic = started.topic if started is not None else ""
    fields = [CardField("Who spoke", clip("\n".join(stats_lines(event.stats)) or "nobody", FIELD_LIMIT))]
    fields.append(CardField("Figures", clip(" · ".join(figures(event.stats, started)), FIELD_LIMIT)))
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


def verdict_card(event: Verdict, *, tally: str = "", abstained: Sequence[str] = ()) -> Card:
    """A ruling: the judge's (each round, then final), the audience's, or the council's decision,
    with its tally (`✅ Keep 2 · ❌ Replace 1`) and who abstained when it has them."""
    by = f" · {event.by.emoji} {event.by.name}" if event.by else ""
    lines = [f"**{event.winner_label}**"]
    if tally:
        lines.append(f"Votes: {tally}")
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
