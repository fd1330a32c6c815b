"""Cost in money: each call priced by the table in config, summed per debate, shown on every closing card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.console.render import stats_line as console_stats
from adapters.discord.render.cards import closing_card as discord_closing
from adapters.slack.render.cards import closing_card as slack_closing
from core.events import DebateCompleted, DebateStarted, TurnCompleted, VoteCast
from tests.core.runs import run_debate

PRICE = {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}


async def test_the_closing_card_shows_tokens_times_prices_on_every_front_end(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path,
        options={"rounds": 2, "exchanges_per_round": 1},
        model={"prices": {"scripted": PRICE}},
    )
    tokens = run.result.stats.tokens
    expected = (tokens.input_tokens * 3.0 + tokens.output_tokens * 15.0) / 1e6
    assert tokens.input_tokens > 0 and tokens.cost_usd == pytest.approx(expected)
    # Each call carries its own cost and model; the debate's cost is their sum.
    calls = [t.usage for t in run.of(TurnCompleted)] + [v.usage for v in run.of(VoteCast)]
    assert all(u.model == "scripted" and u.cost_usd > 0 for u in calls)
    shown = f"${expected:.4f}"

    closing, started = run.of(DebateCompleted)[-1], run.of(DebateStarted)[0]
    assert shown in console_stats(closing.stats, started).plain
    card = discord_closing(closing, started, summary=None)
    assert shown in json.dumps([card.description, card.footer, [f.value for f in card.fields]])
    _, blocks = slack_closing(closing, started, last_moderator_text="")
    assert shown in json.dumps(blocks, ensure_ascii=False)


async def test_a_model_without_a_price_shows_no_money(tmp_path: Path) -> None:
    run = await run_debate(tmp_path, options={"rounds": 1, "exchanges_per_round": 1})
    closing = run.of(DebateCompleted)[-1]
    assert closing.stats.tokens.cost_usd == 0
    assert "$" not in console_stats(closing.stats, run.of(DebateStarted)[0]).plain
