"""A budget the platform gives the whole bot is split between its live workers: two workers on one
database each spend half of Slack's Tier 3 per workspace and of Discord's global budget, and a
channel's own posting rate or a webhook's (used by the one worker running its debate) is not split."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from adapters.delivery import shares
from adapters.delivery.rates import Limit, RateWindows
from adapters.discord.delivery.webhooks import discord_limit, discord_share
from adapters.slack.delivery.rates import post_rate, slack_limit, slack_share
from core.settings import StorageSettings
from core.storage import open_store
from core.workers import BudgetShare


async def _allowed_alone_and_beside_another(
    url: str,
    role: str,
    limit_of: Callable[[str], Limit],
    share_of: Callable[[str], Callable[[], float] | None],
    names: list[str],
) -> tuple[list[int], list[int]]:
    this, other = await open_store(url, StorageSettings()), await open_store(url, StorageSettings())
    try:
        share = BudgetShare(this, role, every=1.0)
        shares.register(role, share)
        windows = RateWindows(limit_of, share_of)
        await share.refresh()
        alone = [windows[name].allowed for name in names]
        await other.join_workers(role)  # a second worker of the platform comes up
        await share.refresh()
        return alone, [windows[name].allowed for name in names]
    finally:
        shares.forget(role)
        await this.close()
        await other.close()


async def test_two_live_slack_workers_each_spend_half_of_a_workspaces_tier3(tmp_path: Path) -> None:
    names = ["chat.update", post_rate("C1")]
    alone, beside = await _allowed_alone_and_beside_another(
        f"sqlite:///{tmp_path / 'rostra.db'}", "slack", slack_limit, slack_share, names
    )
    assert alone == [50, 1]
    assert beside == [25, 1]  # a channel's posts come from the worker running its debate: not split


async def test_two_live_discord_workers_each_spend_half_of_the_tokens_global_budget(tmp_path: Path) -> None:
    names = ["global", "webhook:1"]
    alone, beside = await _allowed_alone_and_beside_another(
        f"sqlite:///{tmp_path / 'rostra.db'}", "discord", discord_limit, discord_share, names
    )
    assert alone == [45, 5]
    assert beside == [22, 5]  # a webhook serves one channel's debate: not split
