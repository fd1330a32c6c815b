"""Small rules of English the engine's messages follow: plurals, a motion quoted inside a sentence,
and how a checked quote is marked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_SIBILANT = ("ch", "sh", "s", "x", "z")


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 round`, `2 rounds`, `1 speaker switch`, `3 speaker switches`, `0 votes` (`words`: irregular)."""
    if count == 1:
        return f"1 {word}"
    many = words or (word + ("es" if word.endswith(_SIBILANT) else "s"))
    return f"{count:,} {many}"


def quoted(topic: str) -> str:
    """The motion in quotation marks, whitespace tidied, so a sentence can carry it whatever its form.

    A motion may be a question (`Should cities ban cars?`) or a statement (`Cities should ban cars`);
    lower-cased and dropped into another question it reads badly ("what would settle should cities
    ban cars?"), quoted it reads as what it is: `On “Should cities ban cars?”: what would settle it?`.
    """
    return f"“{' '.join(topic.split())}”"


def quote_mark(verified: bool, document: str | None = None) -> str:
    """How every front end and file marks a panellist's quote once it is checked against the document
    it answers from: `✔ verified in brief.md`, `✘ not found in brief.md`."""
    where = document or "the document"
    return f"✔ verified in {where}" if verified else f"✘ not found in {where}"


def document_of(settings: Mapping[str, Any], persona_id: str) -> str | None:
    """The name of the document a panellist answers from (a panel's `documents` setting), if any."""
    for about in settings.get("documents") or []:
        if isinstance(about, Mapping) and about.get("panellist") == persona_id and about.get("name"):
            return str(about["name"])
    return None
