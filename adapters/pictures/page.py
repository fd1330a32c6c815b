"""A finished debate as one self-contained HTML page, to share outside the chat.

Everything is in the file: inline CSS, the results picture as inline SVG, avatars as initials in
the persona's colour. The page loads nothing (its Content-Security-Policy forbids any fetch and
any script), and every stored text, from the topic to a vote's reason, is HTML-escaped, so no
topic or model reply can become markup, a script or a link; cited links are shown as text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from html import escape
from typing import assert_never

from adapters.card_text import figures
from adapters.pictures.data import picture_of
from adapters.pictures.shapes import hex_color, initials
from adapters.results import ending_text
from core.events import (
    Artifact,
    ClockTick,
    DebateCompleted,
    DebateStarted,
    Event,
    HumanVoteOpened,
    Notice,
    PhaseChanged,
    SpeakerSwitched,
    TurnCompleted,
    TurnDelta,
    TurnStarted,
    Verdict,
    VoteCast,
    VoteWithdrawn,
    VotingClosed,
    VotingStarted,
)
from core.models import PersonaRef, Statistics, VoteOption
from core.ports import DebateRecord
from core.sanitize import strip_controls
from core.transcript import minutes
from core.words import document_of, quote_mark

log = logging.getLogger(__name__)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

STYLE = """
:root { color-scheme: light dark; --ink: #212529; --muted: #5c636a; --bg: #f8f9fa; --card: #ffffff;
  --line: #dee2e6; --keep: #2f9e44; --replace: #d1343a; }
@media (prefers-color-scheme: dark) { :root { --ink: #e9ecef; --muted: #adb5bd; --bg: #16181b;
  --card: #212529; --line: #343a40; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 860px; margin: 0 auto; padding: 24px 16px 48px; }
h1 { font-size: 1.7rem; line-height: 1.25; margin: 0 0 6px; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 32px 0 12px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.meta, .time, .dim { color: var(--muted); font-size: .9rem; }
.cast { display: flex; flex-wrap: wrap; gap: 8px 18px; padding: 0; list-style: none; }
.cast li { display: flex; align-items: center; gap: 8px; }
.avatar { flex: none; width: 36px; height: 36px; border-radius: 50%; color: #fff; font-weight: 700;
  display: inline-flex; align-items: center; justify-content: center; font-size: .85rem; }
figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 8px; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { color: #5c636a; font-size: .85rem; padding: 6px 4px 0; }
.turn { display: flex; gap: 12px; background: var(--card); border: 1px solid var(--line);
  border-radius: 10px; padding: 12px 14px; margin: 10px 0; }
.turn .body { min-width: 0; flex: 1; }
.turn header { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; }
.turn p { margin: 6px 0; overflow-wrap: anywhere; white-space: pre-wrap; }
.who { font-weight: 700; }
blockquote { margin: 6px 0; padding: 2px 10px; border-left: 3px solid var(--line); }
.ok { color: var(--keep); } .no { color: var(--replace); }
.sources { margin: 6px 0; padding-left: 18px; font-size: .9rem; overflow-wrap: anywhere; }
.vote { background: var(--card); border: 1px dashed var(--line); border-radius: 10px; padding: 10px 14px;
  margin: 10px 0; }
.vote ul { margin: 6px 0; padding-left: 18px; }
.result { font-weight: 700; }
.switch, .notice { margin: 10px 0; font-weight: 600; }
.verdict { background: var(--card); border: 2px solid #7048e8; border-radius: 10px; padding: 10px 14px;
  margin: 12px 0; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: right; }
th:first-child, td:first-child { text-align: left; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--card); border: 1px solid var(--line);
  border-radius: 8px; padding: 10px; font-size: .85rem; }
@media (max-width: 520px) { body { font-size: 15px; } .avatar { width: 30px; height: 30px; }
  h1 { font-size: 1.35rem; } }
"""


def _t(text: object) -> str:
    """Stored text as HTML text: control characters dropped, every markup character escaped."""
    return escape(strip_controls(str(text)), quote=True)


def _paragraphs(text: str) -> str:
    parts = [p.strip() for p in strip_controls(text).split("\n\n") if p.strip()]
    return "".join(f"<p>{escape(p, quote=True)}</p>" for p in parts)


def _avatar(name: str, color: str) -> str:
    return (
        f'<span class="avatar" style="background:{hex_color(color)}" aria-hidden="true">'
        f"{_t(initials(name))}</span>"
    )


def _who(ref: PersonaRef) -> str:
    return f'<span class="who" style="color:{hex_color(ref.color)}">{_t(ref.name)}</span>'


def _picture(events: Sequence[Event]) -> str:
    picture = picture_of(events)
    if picture is None:
        return ""
    try:
        from adapters.pictures.draw import to_svg

        svg = to_svg(picture)
    except Exception:  # the page goes out without its picture
        log.warning("results picture for the page could not be drawn", exc_info=True)
        return ""
    svg = svg.replace("<svg", f'<svg role="img" aria-label="{_t(picture.alt)}"', 1)
    return f"<h2>Results</h2><figure>{svg}<figcaption>{_t(picture.alt)}</figcaption></figure>"


def _figures(stats: Statistics, started: DebateStarted | None) -> str:
    judged = any(p.judged for p in stats.per_persona)
    head = ["Persona", "Turns", "Words"] + (["Judged", "Keep", "Replace"] if judged else [])
    rows = []
    for p in stats.per_persona:
        cells = [str(p.turns), str(p.words)] + (
            [str(p.judged), str(p.votes_keep), str(p.votes_replace)] if judged else []
        )
        rows.append(f"<tr><td>{_who(p.persona)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        "<h2>Figures</h2><table><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + f'</tbody></table><p class="dim">{_t(" · ".join(figures(stats, started)))}</p>'
    )


class _Page:
    """Walks the log once, writing each event's part of the page."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.headings: dict[str, str] = {}
        self.options: dict[str, tuple[VoteOption, ...]] = {}
        self.open_vote = False
        self.started_at: DebateStarted | None = None

    def _choice(self, vote_id: str, key: str) -> str:
        option = next((o for o in self.options.get(vote_id, ()) if o.key == key), None)
        return f"{option.emoji} {option.label}" if option else key

    def _close_vote(self) -> None:
        if self.open_vote:
            self.out.append("</ul></section>")
            self.open_vote = False

    def add(self, event: Event) -> None:
        match event:
            case DebateStarted():
                self.started_at = event
            case TurnStarted():
                self.headings[event.turn_id] = event.heading
            case TurnCompleted():
                self._close_vote()
                self._turn(event)
            case VotingStarted():
                self._close_vote()
                self.options[event.vote_id] = event.options
                self.out.append(f'<section class="vote"><strong>🗳 {_t(event.title)}</strong><ul>')
                self.open_vote = True
            case VoteCast():
                who = f"{event.voter.emoji} {event.voter.name}".strip()
                kind = "person" if event.voter.human else "AI"
                reason = f" — {_t(event.reason)}" if event.reason else ""
                self.out.append(
                    f"<li>{_t(who)} <span class=dim>({kind})</span> → "
                    f"<strong>{_t(self._choice(event.vote_id, event.choice))}</strong>{reason}</li>"
                )
            case VoteWithdrawn():
                self.out.append(f"<li class=dim>{_t(event.voter.name)} withdrew their vote</li>")
            case HumanVoteOpened():
                why = "to break a tie" if event.reason == "tie" else "alongside the observers"
                self.out.append(f"<li class=dim>People could vote {why} for {int(event.window)} s</li>")
            case VotingClosed():
                self._closed(event)
            case SpeakerSwitched():
                self._close_vote()
                self.out.append(
                    f'<p class="switch">🔁 {_who(event.old)} steps down; {_who(event.new)} takes the floor'
                    f" ({_t(event.reason)})</p>"
                )
            case Verdict():
                self._close_vote()
                by = f" · {_who(event.by)}" if event.by else ""
                title = f"<strong>{_t(event.title)}{by}: {_t(event.winner_label)}</strong>"
                self.out.append(f'<section class="verdict">{title}{_paragraphs(event.reasoning)}</section>')
            case Notice():
                self._close_vote()
                self.out.append(f'<p class="notice dim">{_t(event.level)}: {_t(event.message)}</p>')
            case Artifact():
                self._close_vote()
                self.out.append(
                    f"<details><summary>📎 {_t(event.name)} ({len(event.content):,} characters)</summary>"
                    f"<pre>{_t(event.content)}</pre></details>"
                )
            case DebateCompleted():
                self._close_vote()
                if event.summary:
                    self.out.append(f"<h2>Summary</h2>{_paragraphs(event.summary)}")
                self.out.append(f'<p class="dim">Ended: {_t(ending_text(event))}</p>')
                self.out.append(_figures(event.stats, self.started_at))
            case PhaseChanged() | ClockTick() | TurnDelta():
                pass
            case _:
                assert_never(event)

    def _turn(self, event: TurnCompleted) -> None:
        heading = self.headings.get(event.turn_id, f"Round {event.round}")
        marks = " (fallback)" if event.fallback else " (interrupted)" if event.interrupted else ""
        when = f"{event.at:%H:%M:%S} UTC"
        if event.elapsed is not None:
            when = f"{minutes(event.elapsed)} · {when}"
        document = document_of(self.started_at.settings, event.speaker.id) if self.started_at else None
        quotes = "".join(
            f"<blockquote>“{_t(q.text)}” "
            f'<span class="{"ok" if q.verified else "no"}">{_t(quote_mark(q.verified, document))}</span>'
            "</blockquote>"
            for q in event.quotes
        )
        sources = (
            '<ul class="sources">'
            + "".join(f"<li>{_t(s.title)}: <code>{_t(s.url)}</code></li>" for s in event.sources)
            + "</ul>"
            if event.sources
            else ""
        )
        avatar = _avatar(event.speaker.name, event.speaker.color)
        header = (
            f'<header>{_who(event.speaker)}<span class="dim">{_t(heading)}{marks}</span>'
            f'<time class="time">{_t(when)}</time></header>'
        )
        self.out.append(
            f'<article class="turn" data-turn="{_t(event.turn_id)}">{avatar}<div class="body">{header}'
            f"{_paragraphs(event.text)}{quotes}{sources}</div></article>"
        )

    def _closed(self, event: VotingClosed) -> None:
        tally = ", ".join(f"{self._choice(event.vote_id, k)} {v:g}" for k, v in event.tally.items())
        people = ", ".join(f"{self._choice(event.vote_id, k)} {v}" for k, v in event.human_tally.items())
        figures = "; ".join(
            part for part in (f"AI: {tally}" if tally else "", f"people: {people}" if people else "") if part
        )
        line = f'<p class="result">Result: {_t(event.decision_label)}'
        line += f' <span class="dim">({_t(figures)})</span>' if figures else ""
        line += "</p>"
        if event.note:
            line += f'<p class="dim">{_t(event.note)}</p>'
        if self.open_vote:
            self.out.append(f"</ul>{line}</section>")
            self.open_vote = False
        else:
            self.out.append(line)


def _documents(started: DebateStarted) -> str:
    docs = started.settings.get("documents")
    if not isinstance(docs, list) or not docs:
        return ""
    names = {m.persona.id: m.persona.name for m in started.cast}
    items = "".join(
        f"<li>{_t(d.get('name', ''))} ({_t(d.get('chars', ''))} characters)"
        + (f" · {_t(names.get(str(d['panellist']), d['panellist']))}" if d.get("panellist") else "")
        + "</li>"
        for d in docs
        if isinstance(d, dict)
    )
    return f"<h2>Documents</h2><ul>{items}</ul>"


def debate_page(record: DebateRecord | None, events: Sequence[Event]) -> str:
    """The whole page as one HTML string (UTF-8)."""
    page = _Page()
    for event in events:
        page.add(event)
    page._close_vote()
    started = page.started_at
    topic = started.topic if started else record.topic if record else "Debate"
    fmt = started.format if started else record.format if record else ""
    debate_id = started.debate_id if started else record.id if record else ""
    meta = f"Debate {debate_id} · {fmt}"
    if record is not None:
        meta += f" · started {record.created_at:%Y-%m-%d %H:%M} UTC · {record.status}"
    cast = ""
    if started is not None:
        cast = (
            '<h2>Cast</h2><ul class="cast">'
            + "".join(
                f"<li>{_avatar(m.persona.name, m.persona.color)}<span>{_who(m.persona)}"
                f'<br><span class="dim">{_t(m.role)}</span></span></li>'
                for m in started.cast
            )
            + "</ul>"
            + _documents(started)
        )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{_t(topic)} · Rostra</title><style>{STYLE}</style></head><body><main>"
        f'<h1>{_t(topic)}</h1><p class="meta">{_t(meta)}</p>'
        f"{cast}{_picture(events)}<h2>The debate</h2>{''.join(page.out)}"
        '<p class="dim">Made with Rostra.</p></main></body></html>\n'
    )


async def debate_page_html(record: DebateRecord | None, events: Sequence[Event]) -> str:
    """`debate_page` off the event loop (the picture is drawn in a worker thread)."""
    return await asyncio.to_thread(debate_page, record, list(events))
