"""Small pieces of card text both front ends write the same way (pure): counts and lists."""

from __future__ import annotations

from collections.abc import Sequence


def plural(count: int, word: str) -> str:
    """`1 turn`, `2 turns`, `3 switches`."""
    if count == 1:
        return f"1 {word}"
    return f"{count:,} {word}{'es' if word.endswith(('ch', 'sh', 's')) else 's'}"


def either(items: Sequence[str], joiner: str = "or") -> str:
    """`a`, `a or b`, `a, b or c`."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {joiner} {items[-1]}"
