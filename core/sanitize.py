"""The one rule for text from people and models that may reach a terminal or be judged empty.

C0 and C1 control characters (except newline and tab) are removed: an ESC sequence in a topic or a
model's reply could otherwise retitle, clear or rewrite an operator's terminal. Text with no visible
character (only spaces, zero-width and other format characters) counts as empty.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LONE_SURROGATES = re.compile("[\ud800-\udfff]")
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters that render as nothing (Hangul fillers, the blank Braille pattern)."""

T = TypeVar("T")


def strip_controls(text: str) -> str:
    """`text` without C0/C1 control characters, newline and tab kept (carriage returns removed)."""
    return _CONTROLS.sub("", text)


def well_formed_text(text: str) -> str:
    """`text` with lone surrogates (which no UTF-8 store or platform accepts) replaced by U+FFFD."""
    return _LONE_SURROGATES.sub("\ufffd", text)


def well_formed(value: T) -> T:
    """A copy of `value` (as for `terminal_safe`) with lone surrogates replaced in every string:
    for text a model or a person hands in, at the edge."""
    return _walk(value, well_formed_text)  # type: ignore[no-any-return]


def is_invisible(char: str) -> bool:
    return (
        char.isspace()
        or char in _BLANK_LETTERS
        or unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me")
    )


def has_visible_text(text: str) -> bool:
    """Whether any character would show: U+200B, U+2060, U+FEFF and the like alone do not."""
    return any(not is_invisible(c) for c in text)


def terminal_safe(value: T) -> T:
    """A copy of `value` (text, an event or any pydantic model, tuples, lists, dicts of them)
    with control characters removed from every string in it."""
    return _walk(value, strip_controls)  # type: ignore[no-any-return]


def _walk(value: Any, fix: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        fixed = fix(value)
        return value if fixed == value else fixed
    if isinstance(value, BaseModel):
        changes = {}
        for name in type(value).model_fields:
            before = getattr(value, name)
            after = _walk(before, fix)
            if after is not before:
                changes[name] = after
        return value.model_copy(update=changes) if changes else value
    if isinstance(value, tuple):
        cleaned = tuple(_walk(v, fix) for v in value)
        return value if all(a is b for a, b in zip(cleaned, value, strict=True)) else cleaned
    if isinstance(value, list):
        return [_walk(v, fix) for v in value]
    if isinstance(value, dict):
        return {_walk(k, fix): _walk(v, fix) for k, v in value.items()}
    return value
