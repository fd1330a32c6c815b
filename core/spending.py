"""Daily budgets in money: what was spent today per server/workspace and in this process.

A server's or workspace's day is read from the store when a debate would start there: the cost of
each model call is on its stored event, whichever process ran the debate, so several workers on one
database hold one budget, and a restart does not reset the day. This process's own day is counted
as its debates' events go by (see core.observe), seeded from the store's event logs at start-up.
`check` is the one place that refuses a new debate once a day's budget is spent; admission and the
manager call it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime, time, timedelta

from core.errors import AdmissionError, UnreadableDebate
from core.events import Event
from core.observe import DebateTags
from core.ports import DebateRecord, Store
from core.pricing import format_cost
from core.settings import LimitsSettings
from core.usage import USAGE_KINDS, call_usages

log = logging.getLogger(__name__)


def _until_midnight(now: datetime) -> str:
    left = (datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC) - now).total_seconds()
    hours, minutes = int(left // 3600), int(left % 3600 // 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


class SpendLedger:
    def __init__(
        self, limits: LimitsSettings, store: Store, *, now: Callable[[], datetime] | None = None
    ) -> None:
        self._limits = limits
        self._store = store
        self._now = now or (lambda: datetime.now(UTC))
        self._day: date | None = None
        self._process = 0.0

    def _today(self) -> date:
        day = self._now().date()
        if day != self._day:
            self._day, self._process = day, 0.0
        return day

    def add(self, *, cost: float, day: date | None = None) -> None:
        today = self._today()
        if cost > 0 and (day is None or day == today):
            self._process += cost

    def spent(self) -> float:
        """What this process's debates spent today."""
        self._today()
        return self._process

    async def spent_in(self, *, platform: str, scope: str) -> float:
        """What the debates of a server or workspace spent today, in every process (from the store)."""
        today = self._now().date()
        events = await self._store.usage_in_scope(
            platform, scope, datetime.combine(today, time(), UTC), USAGE_KINDS
        )
        return sum(usage.cost_usd for at, usage in call_usages(events) if at.astimezone(UTC).date() == today)

    def observe(self, event: Event, tags: DebateTags) -> None:
        for at, usage in call_usages([event]):
            self.add(cost=usage.cost_usd, day=at.date())

    def seed(self, debates: Iterable[tuple[DebateRecord, Sequence[Event]]]) -> None:
        """Count what stored debates spent today (at start-up)."""
        for _, events in debates:
            for at, usage in call_usages(events):
                self.add(cost=usage.cost_usd, day=at.date())

    async def check(self, *, platform: str, scope: str) -> None:
        """Raise AdmissionError, with a message for the person, once a daily budget is spent
        (StoreError when the store cannot say what a server or workspace spent)."""
        limits = self._limits
        wait = _until_midnight(self._now())
        if limits.daily_cost_per_process > 0 and self.spent() >= limits.daily_cost_per_process:
            raise AdmissionError(
                f"Rostra's daily budget of {format_cost(limits.daily_cost_per_process)} is spent"
                f" ({format_cost(self.spent())} today); new debates can start again in {wait} (UTC midnight)."
            )
        if not scope or limits.daily_cost_per_scope <= 0:
            return
        here = await self.spent_in(platform=platform, scope=scope)
        if here >= limits.daily_cost_per_scope:
            place = "workspace" if platform == "slack" else "server"
            raise AdmissionError(
                f"This {place}'s daily budget of {format_cost(limits.daily_cost_per_scope)} is spent"
                f" ({format_cost(here)} today); new debates can start again in {wait} (UTC midnight)."
            )


async def seed_from_store(ledger: SpendLedger, store: Store, *, limit: int = 2000) -> None:
    """Count what the debates touched today spent, so a restart keeps the day's budgets."""
    today = datetime.now(UTC).date()
    found = []
    for record in await store.list_debates(limit):
        if record.updated_at.astimezone(UTC).date() >= today:
            try:
                found.append((record, await store.events(record.id)))
            except UnreadableDebate as exc:  # its spend is unknown; the rest still counts
                log.info("%s; its spending is not counted", exc)
    ledger.seed(found)
