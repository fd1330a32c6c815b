"""This worker's share of each platform's bot-wide rate budgets, for the rate windows to read.

The bot's process joins its platform's live workers (core.workers.BudgetShare, kept current by its
heartbeat) and registers the share here under the platform's name; a rate window of a budget every
worker spends asks `fraction(platform)` before each call. A process that registered nothing (the
terminal, a test of one process) spends the whole budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Share(Protocol):
    @property
    def fraction(self) -> float: ...


_SHARES: dict[str, Share] = {}


def register(platform: str, share: Share) -> None:
    """From now on this process spends `share.fraction` of `platform`'s bot-wide budgets."""
    _SHARES[platform] = share


def forget(platform: str) -> None:
    _SHARES.pop(platform, None)


def fraction(platform: str) -> float:
    """This worker's fraction of `platform`'s bot-wide budgets (1.0 when it is the only worker)."""
    share = _SHARES.get(platform)
    return share.fraction if share is not None else 1.0


def of(platform: str) -> Callable[[], float]:
    """A reader of `fraction(platform)`, for a rate window's `share`."""
    return lambda: fraction(platform)
