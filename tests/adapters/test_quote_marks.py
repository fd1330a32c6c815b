"""A panellist's quotes, once checked against the document they answer from, are marked in the same
words everywhere a person reads them: the Discord and Slack threads, the terminal, the results page
and the Markdown transcript (`core.words.quote_mark`), each naming the document."""

from __future__ import annotations

import re
from html import unescape

from rich.console import Console

from adapters.console.render import ConsoleView
from adapters.discord.render.events import DiscordView
from adapters.discord.render.ops import Show
from adapters.pictures.page import debate_page
from adapters.slack.render.events import SlackView
from adapters.slack.render.ops import Post
from core.events import DebateStarted, Event, TurnCompleted, TurnStarted
from core.models import CastMember, PersonaRef, QuoteCheck
from core.transcript import to_markdown

ADA = PersonaRef(id="ada", name="Ada Quill", emoji="🧮")
DOCUMENTS = [{"panellist": "ada", "name": "transit.md", "chars": 1200}]
EVENTS: list[Event] = [
    DebateStarted(
        format="panel",
        topic="How should the city cut car traffic?",
        cast=(CastMember(persona=ADA, role="panellist"),),
        settings={"documents": DOCUMENTS},
    ),
    TurnStarted(turn_id="t1", speaker=ADA, role="panellist", round=0, heading="Answer"),
    TurnCompleted(
        turn_id="t1",
        speaker=ADA,
        role="panellist",
        round=0,
        text="Buses first.",
        quotes=(
            QuoteCheck(text="Buses carry more people per lane than cars", verified=True),
            QuoteCheck(text="trams are always cheaper", verified=False),
        ),
    ),
]
MARKS = [
    "“Buses carry more people per lane than cars” ✔ verified in transit.md",
    "“trams are always cheaper” ✘ not found in transit.md",
]


def discord() -> str:
    view = DiscordView(streaming=False)
    shows = [op for event in EVENTS for op in view.render(event) if isinstance(op, Show)]
    return "\n".join(post.content for show in shows for post in show.posts)


def slack() -> str:
    view = SlackView(streaming=False, limit=4000)
    return "\n".join(op.text for event in EVENTS for op in view.render(event) if isinstance(op, Post))


def terminal() -> str:
    console, view = Console(record=True, width=200), ConsoleView()
    for event in EVENTS:
        for piece in view.render(event):
            console.print(piece.renderable)
    return console.export_text()


def test_every_front_end_marks_checked_quotes_in_the_same_words() -> None:
    shown = {
        "discord": discord(),
        "slack": slack(),
        "terminal": terminal(),
        "page": unescape(re.sub(r"<[^>]+>", "", debate_page(None, EVENTS))),
        "transcript": to_markdown(None, EVENTS),
    }
    for where, text in shown.items():
        for mark in MARKS:
            assert mark in text, (where, mark)
