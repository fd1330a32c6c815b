"""`rostra usage` and the cost column of `rostra debates`: what debates spent, from the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console
from rich.table import Table

from core.events import Event
from core.models import TokenUsage
from core.ports import DebateRecord, Store
from core.pricing import format_cost
from core.usage import debate_usage, tally


async def debate_costs(store: Store, records: list[DebateRecord]) -> dict[str, TokenUsage]:
    return {r.id: debate_usage(await store.events(r.id)) for r in records}


def tokens_cell(usage: TokenUsage) -> str:
    """`12,345` or `12,345 (cache: 9,000 read, 310 written)`."""
    text = f"{usage.total:,}"
    if usage.cache_read_tokens or usage.cache_write_tokens:
        text += f" (cache: {usage.cache_read_tokens:,} read, {usage.cache_write_tokens:,} written)"
    return text


def cost_cell(usage: TokenUsage) -> str:
    return format_cost(usage.cost_usd) if usage.cost_usd > 0 else "—"


async def load_recent(store: Store, *, days: int, limit: int) -> list[tuple[DebateRecord, list[Event]]]:
    since = datetime.now(UTC) - timedelta(days=days)
    found = []
    for record in await store.list_debates(limit):
        if record.updated_at >= since:
            found.append((record, await store.events(record.id)))
    return found


def usage_table(debates: list[tuple[DebateRecord, list[Event]]], *, days: int) -> Table | None:
    since = (datetime.now(UTC) - timedelta(days=days - 1)).date()
    rows = tally(debates, since=since)
    if not rows:
        return None
    table = Table(title=f"Model usage, last {days} days (UTC)")
    for column in ("Day", "Where", "Format", "Model", "Debates", "Calls", "Input", "Output"):
        table.add_column(
            column, justify="right" if column in ("Debates", "Calls", "Input", "Output") else "left"
        )
    for column in ("Cache read", "Cache write", "Cost"):
        table.add_column(column, justify="right")
    total = TokenUsage()
    for key, totals in rows.items():
        u = totals.usage
        total = total + u
        table.add_row(
            f"{key.day:%Y-%m-%d}",
            key.where,
            key.format,
            key.model,
            str(len(totals.debates)),
            str(totals.calls),
            f"{u.input_tokens:,}",
            f"{u.output_tokens:,}",
            f"{u.cache_read_tokens:,}",
            f"{u.cache_write_tokens:,}",
            format_cost(u.cost_usd),
        )
    table.add_section()
    table.add_row(
        "total",
        "",
        "",
        "",
        str(len({d for t in rows.values() for d in t.debates})),
        str(sum(t.calls for t in rows.values())),
        f"{total.input_tokens:,}",
        f"{total.output_tokens:,}",
        f"{total.cache_read_tokens:,}",
        f"{total.cache_write_tokens:,}",
        format_cost(total.cost_usd),
    )
    return table


async def print_usage(store: Store, console: Any, *, days: int, limit: int = 5000) -> None:
    table = usage_table(await load_recent(store, days=days, limit=limit), days=days)
    out = console or Console()
    out.print(table if table is not None else f"No model calls in the last {days} days.")
