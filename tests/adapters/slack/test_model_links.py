"""A model's Markdown link is shown as text in Slack: its label and its address in code, never a
clickable link whose label hides where it goes (a research citation is the one clickable kind)."""

from __future__ import annotations

from adapters.slack.render.events import turn_body
from adapters.slack.render.text import model_text
from core.models import Source


def test_a_markdown_link_from_a_model_is_shown_as_text() -> None:
    shown = model_text("Read [the official results](https://evil.test/x?a=1&b=2) now.")
    assert shown == "Read the official results (`https://evil.test/x?a=1&amp;b=2`) now."
    assert "<https://" not in shown and "|" not in shown


def test_a_research_citation_stays_a_link() -> None:
    body = turn_body(
        "Round 1", "See the plan.", sources=(Source(title="the Ghent plan", url="https://example.org/ghent"),)
    )
    assert "• <https://example.org/ghent|the Ghent plan>" in body
