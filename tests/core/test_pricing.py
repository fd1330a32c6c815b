"""Which model each call uses, and what calls cost by the price table."""

from __future__ import annotations

import pytest

from core.llm.registry import is_claude_5
from core.models import TokenUsage
from core.pricing import cost_of, cost_suffix, format_cost
from core.settings import ModelPrice, ModelSettings


def test_ballots_go_to_the_small_model_and_everything_else_to_the_default() -> None:
    s = ModelSettings(default="anthropic:claude-sonnet-5-5", ballots="anthropic:claude-haiku-5-5")
    assert s.model_for("observer", "vote") == "anthropic:claude-haiku-5-5"
    assert s.model_for("council", "vote") == "anthropic:claude-haiku-5-5"
    # Judgements and rulings are votes by kind but deserve the strong model.
    assert s.model_for("judge", "vote") == "anthropic:claude-sonnet-5-5"
    assert s.model_for("moderator", "vote") == "anthropic:claude-sonnet-5-5"
    assert s.model_for("proposition", "turn") == "anthropic:claude-sonnet-5-5"
    assert s.model_for("moderator", "summary") == "anthropic:claude-sonnet-5-5"


def test_a_role_override_wins_and_a_scripted_default_stays_scripted() -> None:
    s = ModelSettings(
        default="anthropic:claude-sonnet-5-5",
        ballots="anthropic:claude-haiku-5-5",
        roles={"observer": "anthropic:claude-opus-5"},
    )
    assert s.model_for("observer", "vote") == "anthropic:claude-opus-5"
    rehearsal = ModelSettings(default="scripted", ballots="anthropic:claude-haiku-5-5")
    assert rehearsal.model_for("observer", "vote") == "scripted"


def test_cost_is_tokens_times_the_price_per_million() -> None:
    price = ModelPrice(input=2, output=10, cache_write=2.5, cache_read=0.2)
    usage = TokenUsage(
        input_tokens=1000, output_tokens=500, cache_write_tokens=2000, cache_read_tokens=10_000
    )
    assert cost_of(usage, price) == pytest.approx((1000 * 2 + 500 * 10 + 2000 * 2.5 + 10_000 * 0.2) / 1e6)
    assert cost_of(usage, None) == 0.0


def test_sums_keep_cost_and_say_when_models_were_mixed() -> None:
    a = TokenUsage(input_tokens=10, cost_usd=0.5, model="anthropic:claude-sonnet-5-5")
    b = TokenUsage(input_tokens=5, cost_usd=0.25, model="anthropic:claude-haiku-5-5")
    assert (TokenUsage() + a).model == "anthropic:claude-sonnet-5-5"
    total = a + b
    assert total.cost_usd == pytest.approx(0.75) and total.model == "mixed"
    assert format_cost(0.00421) == "$0.0042" and format_cost(12.5) == "$12.50"
    assert cost_suffix(TokenUsage()) == "" and cost_suffix(total) == " · $0.7500"


def test_claude_5_ids_are_recognised() -> None:
    assert all(is_claude_5(m) for m in ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5"))
    assert not is_claude_5("claude-sonnet-4-5") and not is_claude_5("claude-haiku-4-5-20251001")
