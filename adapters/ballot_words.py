"""The cards' voting instructions when people vote with buttons instead of reactions (pure)."""

from __future__ import annotations

import re

from adapters.card_text import ONE_VOTE_EACH

_EXACT = (
    (ONE_VOTE_EACH, "One vote each: your last click counts."),
    ("with one of their emoji", "on one of their buttons"),
    ("react with ", "click "),
    ("React with ", "Click "),
)
_WORD = re.compile(r"\b([Rr])eact(ing)?\b")


def clicking(text: str) -> str:
    """`react ✅ keep` → `click ✅ keep`, and so on ("reactions" is left alone)."""
    for old, new in _EXACT:
        text = text.replace(old, new)
    return _WORD.sub(lambda m: ("C" if m.group(1) == "R" else "c") + "lick" + (m.group(2) or ""), text)
