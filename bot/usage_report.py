"""`rostra usage` and `rostra debates`: what debates spent and how they ended, from the store.

Each report is built once as plain rows, then shown either as a table that fits the terminal
(`bot.tables`) or, with `--json`, as one JSON document for scripts.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from typing import Any

from rich.console import RenderableType

from bot.tables import ColumnSpec, fitted_table
from core.errors import UnreadableDebate
from core.events import Event
from core.models import TokenUsage
from core.ports import DebateRecord, Store
from core.pricing import format_cost
from core.usage import debate_usage, tally

log = logging.getLogger(__name__)

WIDE = 10_000  # a width at which no column is ever left out


async def readable_events(
    store: Store, records: list[DebateRecord]
) -> list[tuple[DebateRecord, list[Event]]]:
    """Each debate with its events; one whose stored data no longer loads is named (a warning on
    stderr) and left out, so one bad row never hides the rest."""
    found = []
    for record in records:
        try:
            found.append((record, await store.events(record.id)))
        except UnreadableDebate as exc:
            log.warning("%s; left out", exc)
    return found


async def debate_costs(store: Store, records: list[DebateRecord]) -> dict[str, TokenUsage]:
    """What each readable debate spent (an unreadable one is left out: see `readable_events`)."""
    return {r.id: debate_usage(events) for r, events in await readable_events(store, records)}


def tokens_cell(usage: TokenUsage) -> str:
    """`12,345` or `12,345 (cache: 9,000 read, 310 written)`."""
    text = f"{usage.total:,}"
    if usage.cache_read_tokens or usage.cache_write_tokens:
        text += f" (cache: {usage.cache_read_tokens:,} read, {usage.cache_write_tokens:,} written)"
    return text


def cost_cell(usage: TokenUsage) -> str:
    return format_cost(usage.cost_usd) if usage.cost_usd > 0 else "—"


def usage_json(usage: TokenUsage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "total_tokens": usage.total,
        "cost_usd": round(usage.cost_usd, 6),
    }


# --- rostra debates --------------------------------------------------------------------------------

DEBATE_COLUMNS = (
    ColumnSpec("ID"),
    ColumnSpec("Status"),
    ColumnSpec("Format"),
    ColumnSpec("Where", drop=2),
    ColumnSpec("Started (UTC)"),
    ColumnSpec("Tokens", right=True, drop=1),
    ColumnSpec("Cost", right=True, drop=3),
    ColumnSpec("Topic", squeeze=True),
)


def where_cell(record: DebateRecord) -> str:
    return record.binding.platform + (f" #{record.binding.channel}" if record.binding.channel else "")


def debates_table(records: list[DebateRecord], costs: dict[str, TokenUsage], *, width: int) -> RenderableType:
    """Status, format and start stay whole at any width; why a debate ended is under its topic."""
    rows = []
    for r in (r for r in records if r.id in costs):  # without costs: its events could not be read
        topic = (
            r.topic if r.status in ("completed", "running") or not r.reason else f"{r.topic}\n({r.reason})"
        )
        used = costs[r.id]
        started = f"{r.created_at:%Y-%m-%d %H:%M}"
        rows.append(
            [r.id, r.status, r.format, where_cell(r), started, tokens_cell(used), cost_cell(used), topic]
        )
    return fitted_table("Recent debates", DEBATE_COLUMNS, rows, width=width)


def debates_json(records: list[DebateRecord], costs: dict[str, TokenUsage]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.id,
            "status": r.status,
            "reason": r.reason,
            "format": r.format,
            "topic": r.topic,
            "platform": r.binding.platform,
            "scope": r.binding.scope,
            "channel": r.binding.channel,
            "started_at": r.created_at.isoformat(),
            "updated_at": r.updated_at.isoformat(),
            "usage": usage_json(costs[r.id]),
        }
        for r in records
        if r.id in costs  # without costs: its events could not be read
    ]


# --- rostra usage ----------------------------------------------------------------------------------

USAGE_COLUMNS = (
    ColumnSpec("Day"),
    ColumnSpec("Where"),
    ColumnSpec("Format"),
    ColumnSpec("Model", squeeze=True),
    ColumnSpec("Debates", right=True, drop=5),
    ColumnSpec("Calls", right=True, drop=6),
    ColumnSpec("Input", right=True, drop=4),
    ColumnSpec("Output", right=True, drop=3),
    ColumnSpec("Cache read", right=True, drop=2),
    ColumnSpec("Cache write", right=True, drop=1),
    ColumnSpec("Cost", right=True),
)


async def load_recent(store: Store, *, days: int, limit: int) -> list[tuple[DebateRecord, list[Event]]]:
    since = datetime.now(UTC) - timedelta(days=days)
    recent = [r for r in await store.list_debates(limit) if r.updated_at >= since]
    return await readable_events(store, recent)


def usage_report(
    debates: list[tuple[DebateRecord, list[Event]]], *, days: int, today: date | None = None
) -> dict[str, Any]:
    """The usage by UTC day, server/workspace, format and model, with a total, as plain data.

    `today` (UTC) is the window's last day: the clock's, unless the caller fixes it (its events'
    day, when a run may cross midnight between making them and asking)."""
    since = (today or datetime.now(UTC).date()) - timedelta(days=days - 1)
    rows = tally(debates, since=since)
    total = TokenUsage()
    for totals in rows.values():
        total = total + totals.usage
    return {
        "days": days,
        "rows": [
            {
                "day": f"{key.day:%Y-%m-%d}",
                "where": key.where,
                "format": key.format,
                "model": key.model,
                "debates": len(totals.debates),
                "calls": totals.calls,
                **usage_json(totals.usage),
            }
            for key, totals in rows.items()
        ],
        "total": {
            "debates": len({d for t in rows.values() for d in t.debates}),
            "calls": sum(t.calls for t in rows.values()),
            **usage_json(total),
        },
    }


def _usage_cells(row: dict[str, Any], cost_usd: float) -> list[str]:
    return [
        f"{row['debates']}",
        f"{row['calls']}",
        f"{row['input_tokens']:,}",
        f"{row['output_tokens']:,}",
        f"{row['cache_read_tokens']:,}",
        f"{row['cache_write_tokens']:,}",
        format_cost(cost_usd),
    ]


def usage_table(
    debates: list[tuple[DebateRecord, list[Event]]],
    *,
    days: int,
    width: int = WIDE,
    today: date | None = None,
) -> RenderableType | None:
    report = usage_report(debates, days=days, today=today)
    if not report["rows"]:
        return None
    rows = [
        [r["day"], r["where"], r["format"], r["model"], *_usage_cells(r, r["cost_usd"])]
        for r in report["rows"]
    ]
    total = report["total"]
    return fitted_table(
        f"Model usage, last {days} days (UTC)",
        USAGE_COLUMNS,
        rows,
        width=width,
        total=["total", "", "", "", *_usage_cells(total, total["cost_usd"])],
    )


async def print_usage(store: Store, console: Any, *, days: int, limit: int = 5000) -> None:
    table = usage_table(await load_recent(store, days=days, limit=limit), days=days, width=console.width)
    console.print(table if table is not None else f"No model calls in the last {days} days.")
