"""Money: what a model call costs by the configured price table, and how a cost is shown."""

from __future__ import annotations

from core.models import TokenUsage
from core.settings import ModelPrice

_PER = 1_000_000


def cost_of(usage: TokenUsage, price: ModelPrice | None) -> float:
    """US dollars for `usage` at `price` (0 when the model has no price in config)."""
    if price is None:
        return 0.0
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_write_tokens * price.cache_write
        + usage.cache_read_tokens * price.cache_read
    ) / _PER


def priced(usage: TokenUsage, model: str, price: ModelPrice | None) -> TokenUsage:
    """The usage of one call by `model`, with its cost filled in."""
    return usage.model_copy(update={"model": model, "cost_usd": cost_of(usage, price)})


def format_cost(usd: float) -> str:
    """`$0.0042`, `$1.27`: four decimals below a dollar (debates often cost cents), else two."""
    if usd >= 1:
        return f"${usd:,.2f}"
    return f"${usd:.4f}"


def cost_suffix(usage: TokenUsage) -> str:
    """` · $0.0123` for closing cards, or nothing when no price was known."""
    return f" · {format_cost(usage.cost_usd)}" if usage.cost_usd > 0 else ""
