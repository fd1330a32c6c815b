"""What debates used and cost, from their stored event logs: per debate, and grouped for reports."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import get_args

from core.events import Event
from core.models import TokenUsage
from core.ports import DebateRecord


def _kinds_with_usage() -> tuple[str, ...]:
    union, *_ = get_args(Event)  # Annotated[A | B | ..., Field(discriminator="kind")]
    return tuple(
        str(kind.model_fields["kind"].default) for kind in get_args(union) if "usage" in kind.model_fields
    )


USAGE_KINDS = _kinds_with_usage()
"""The kinds of event that carry a model call's usage (what `call_usages` finds)."""


def call_usages(events: Iterable[Event]) -> Iterator[tuple[datetime, TokenUsage]]:
    """Each model call's usage as its event recorded it (turns, votes, rulings, failed calls)."""
    for event in events:
        if "usage" not in type(event).model_fields:
            continue  # most events; asking a pydantic model for a missing attribute raises and catches
        usage = getattr(event, "usage", None)
        if isinstance(usage, TokenUsage) and (usage.total or usage.cost_usd):
            yield event.at, usage


def debate_usage(events: Iterable[Event]) -> TokenUsage:
    total = TokenUsage()
    for _, usage in call_usages(events):
        total = total + usage
    return total


@dataclass(frozen=True, order=True)
class UsageKey:
    day: date
    where: str
    format: str
    model: str


@dataclass
class UsageTotals:
    debates: set[str] = field(default_factory=set)
    calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)


def where_of(record: DebateRecord) -> str:
    """`discord:<server id>`, `slack:<team id>`, or `terminal`."""
    b = record.binding
    return f"{b.platform}:{b.scope}" if b.scope else b.platform


def tally(
    debates: Iterable[tuple[DebateRecord, Sequence[Event]]], *, since: date | None = None
) -> dict[UsageKey, UsageTotals]:
    """Usage grouped by UTC day of the call, server/workspace, format and model."""
    rows: dict[UsageKey, UsageTotals] = {}
    for record, events in debates:
        for at, usage in call_usages(events):
            day = at.date()
            if since is not None and day < since:
                continue
            key = UsageKey(day, where_of(record), record.format, usage.model or "unknown")
            totals = rows.setdefault(key, UsageTotals())
            totals.debates.add(record.id)
            totals.calls += 1
            totals.usage = totals.usage + usage
    return dict(sorted(rows.items()))
