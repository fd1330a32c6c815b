"""Small rules of English the engine's messages follow: plurals, and a motion quoted inside a sentence."""

from __future__ import annotations

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
