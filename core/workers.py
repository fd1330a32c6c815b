"""A worker's share of its platform's rate budgets, in a deployment of many workers.

A platform publishes one budget for the whole bot (Slack's Tier 3 calls per minute per workspace,
Discord's 50 requests per second per bot token). Every worker of a platform joins the store's live
workers under the platform's name (core.storage.cluster) and spends `published / live` of each
budget, recounting the live workers every heartbeat: N workers together never spend more than the
platform allows, and the split adapts as workers come and go (a worker that dies is no longer
counted one lease after its last heartbeat; until then the others spend a little less than they
could, never more).
"""

from __future__ import annotations

import asyncio
import logging

from core.errors import StoreError
from core.ports import Store

log = logging.getLogger(__name__)


class BudgetShare:
    """This worker's fraction of its platform's budgets, kept current by `run()`."""

    def __init__(self, store: Store, role: str, every: float) -> None:
        self._store = store
        self.role = role
        self._every = every
        self.live = 1
        self._joined = False

    @property
    def fraction(self) -> float:
        return 1.0 / max(1, self.live)

    def of(self, published: float) -> float:
        """This worker's part of a budget the platform publishes for the whole bot."""
        return published * self.fraction

    async def refresh(self) -> None:
        """Join the live workers (once) and count them again."""
        if not self._joined:
            await self._store.join_workers(self.role)
            self._joined = True
        self.live = max(1, await self._store.live_workers(self.role))

    async def run(self) -> None:
        """Refresh every `every` seconds, for good (a store fault keeps the last count)."""
        while True:
            try:
                await self.refresh()
            except StoreError as exc:
                log.warning("could not count the live %s workers: %s", self.role, exc)
            await asyncio.sleep(self._every)
