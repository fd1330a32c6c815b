"""`rostra usage` groups what debates used by UTC day, server/workspace, format and model."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from rich.table import Table

from bot.usage_report import cost_cell, tokens_cell, usage_table
from core.events import Event, TurnCompleted, VoteCast
from core.models import PersonaRef, TokenUsage, Voter
from core.ports import Binding, DebateRecord
from core.usage import UsageKey, debate_usage, tally

ADA = PersonaRef(id="ada", name="Ada", emoji="🧮")
SONNET, HAIKU = "anthropic:claude-sonnet-5-5", "anthropic:claude-haiku-5-5"


def record(debate_id: str, fmt: str, platform: str, scope: str) -> DebateRecord:
    now = datetime.now(UTC)
    return DebateRecord(
        id=debate_id,
        format=fmt,
        topic="t",
        spec={},
        status="completed",
        binding=Binding(platform=platform, scope=scope),
        created_at=now,
        updated_at=now,
    )


def turn(day: int, model: str, cost: float, tokens: int = 100) -> TurnCompleted:
    usage = TokenUsage(input_tokens=tokens, output_tokens=10, cost_usd=cost, model=model)
    at = datetime(2026, 11, day, 12, tzinfo=UTC)
    return TurnCompleted(turn_id="t", speaker=ADA, role="proposition", round=1, text="x", usage=usage, at=at)


def vote(day: int, cost: float) -> VoteCast:
    usage = TokenUsage(input_tokens=50, output_tokens=5, cost_usd=cost, model=HAIKU)
    at = datetime(2026, 11, day, 12, tzinfo=UTC)
    return VoteCast(vote_id="v1", voter=Voter.of(ADA), choice="keep", usage=usage, at=at)


def test_usage_is_grouped_by_day_place_format_and_model() -> None:
    debates: list[tuple[DebateRecord, list[Event]]] = [
        (
            record("d1", "arena", "discord", "g1"),
            [turn(23, SONNET, 0.01), vote(23, 0.001), turn(24, SONNET, 0.02)],
        ),
        (record("d2", "oxford", "slack", "T1"), [turn(24, SONNET, 0.05)]),
        (record("d3", "arena", "discord", "g1"), [turn(24, SONNET, 0.03), vote(24, 0.002)]),
    ]
    rows = tally(debates)
    assert list(rows) == [
        UsageKey(date(2026, 11, 23), "discord:g1", "arena", HAIKU),
        UsageKey(date(2026, 11, 23), "discord:g1", "arena", SONNET),
        UsageKey(date(2026, 11, 24), "discord:g1", "arena", HAIKU),
        UsageKey(date(2026, 11, 24), "discord:g1", "arena", SONNET),
        UsageKey(date(2026, 11, 24), "slack:T1", "oxford", SONNET),
    ]
    busy = rows[UsageKey(date(2026, 11, 24), "discord:g1", "arena", SONNET)]
    assert busy.debates == {"d1", "d3"} and busy.calls == 2
    assert busy.usage.cost_usd == pytest.approx(0.05) and busy.usage.input_tokens == 200
    assert {key.day for key in tally(debates, since=date(2026, 11, 24))} == {date(2026, 11, 24)}
    assert debate_usage(debates[0][1]).cost_usd == pytest.approx(0.031)
    assert debate_usage(debates[0][1]).model == "mixed"


def test_the_report_has_a_total_row() -> None:
    at = datetime.now(UTC)
    now = turn(1, SONNET, 0.25).model_copy(update={"at": at})
    debates: list[tuple[DebateRecord, list[Event]]] = [(record("d1", "arena", "terminal", ""), [now])]
    table = usage_table(debates, days=1, today=at.date())
    assert isinstance(table, Table)  # wide enough for every column: a plain table
    cost = table.columns[-1]
    assert str(list(cost.cells)[-1]) == "$0.2500"


def test_rostra_debates_shows_cache_use_and_cost_per_debate() -> None:
    used = TokenUsage(
        input_tokens=200, output_tokens=100, cache_read_tokens=9000, cache_write_tokens=310, cost_usd=0.0123
    )
    assert tokens_cell(used) == "9,610 (cache: 9,000 read, 310 written)"
    assert cost_cell(used) == "$0.0123"
    assert tokens_cell(TokenUsage(input_tokens=5)) == "5" and cost_cell(TokenUsage(input_tokens=5)) == "—"
