"""What a person asks for (`DebateSpec`) and how a request is checked before anything starts."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core.errors import SpecError
from core.sanitize import has_visible_text, strip_controls

M = TypeVar("M", bound=BaseModel)

EXAMPLE_TOPIC = "Should cities ban cars?"


@dataclass(frozen=True)
class DebateSpec:
    """A debate request: the format, the motion and format options (see each format's Options)."""

    format: str = "arena"
    topic: str = ""
    options: dict[str, Any] = field(default_factory=dict)


def clean_topic(topic: str, *, max_length: int) -> str:
    """The topic without control characters and with whitespace collapsed; a clear SpecError when
    it is empty (nothing visible: zero-width characters alone are empty) or too long."""
    text = " ".join(strip_controls(topic or "").split())
    if not has_visible_text(text):
        raise SpecError(f'The topic is empty: give the motion to debate, e.g. "{EXAMPLE_TOPIC}"')
    if len(text) > max_length:
        raise SpecError(f"The topic is {len(text)} characters long; the limit is {max_length}.")
    return text


GIVEN_ECHO = 40
"""Characters of a refused value echoed back (a 4,000-digit number is not repeated in full)."""


def _clip(value: Any) -> Any:
    text = value if isinstance(value, str) else str(value) if isinstance(value, int) else None
    if text is None or len(text) <= GIVEN_ECHO:
        return value
    clipped = f"{text[: GIVEN_ECHO - 1]}… ({len(text):,} characters)"
    return clipped if isinstance(value, str) else _Raw(clipped)


class _Raw(str):
    """Shown as is (no quotes) by `!r`."""

    def __repr__(self) -> str:
        return str(self)


def _describe(error: dict[str, Any]) -> str:
    where = ".".join(str(p) for p in error.get("loc", ())) or "options"
    kind = error.get("type", "")
    ctx = error.get("ctx", {}) or {}
    given = _clip(error.get("input"))
    if kind == "extra_forbidden":
        return f"'{where}' is not an option of this format"
    if kind in {"greater_than_equal", "greater_than"}:
        return f"{where} must be at least {ctx.get('ge', ctx.get('gt'))} (got {given})"
    if kind in {"less_than_equal", "less_than"}:
        return f"{where} must be at most {ctx.get('le', ctx.get('lt'))} (got {given})"
    if kind == "literal_error":
        return f"{where} must be one of {ctx.get('expected')} (got {given!r})"
    if kind in {"int_parsing", "int_type", "int_from_float"}:
        return f"{where} must be a whole number (got {given!r})"
    if kind in {"float_parsing", "float_type"}:
        return f"{where} must be a number (got {given!r})"
    return f"{where}: {error.get('msg', 'invalid')}"


def parse_options(model: type[M], defaults: dict[str, Any], given: dict[str, Any]) -> M:
    """Options = config defaults overlaid with the request; errors become one readable line."""
    unknown = sorted(set(given) - set(model.model_fields))
    if unknown:
        names = ", ".join(sorted(model.model_fields))
        raise SpecError(f"Unknown option {', '.join(repr(u) for u in unknown)} (this format takes: {names})")
    for key, value in given.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise SpecError(f"{key} must be a finite number (got {value})")
    try:
        return model.model_validate({**defaults, **{k: v for k, v in given.items() if v is not None}})
    except ValidationError as exc:
        raise SpecError("; ".join(_describe(dict(e)) for e in exc.errors())) from None
