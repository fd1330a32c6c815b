"""Daily budgets in money: what was spent today per server/workspace and in this process.

The ledger watches every event that carries a model call's usage (see core.observe) and is seeded
from the store's event logs at start-up, so a restart does not reset the day. `check` is the one
place that refuses a new debate once a day's budget is spent; admission and the manager call it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime, timedelta

from core.errors import AdmissionError, UnreadableDebate
from core.events import Event
from core.observe import DebateTags
from core.ports import DebateRecord, Store
from core.pricing import format_cost
from core.settings import LimitsSettings
from core.usage import call_usages

log = logging.getLogger(__name__)


def _until_midnight(now: datetime) -> str:
    left = (datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC) - now).total_seconds()
    hours, minutes = int(left // 3600), int(left % 3600 // 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


class SpendLedger:
    def __init__(self, limits: LimitsSettings, *, now: Callable[[], datetime] | None = None) -> None:
        self._limits = limits
        self._now = now or (lambda: datetime.now(UTC))
        self._day: date | None = None
        self._process = 0.0
        self._scopes: dict[tuple[str, str], float] = {}

    def _today(self) -> date:
        day = self._now().date()
        if day != self._day:
            self._day, self._process, self._scopes = day, 0.0, {}
        return day

    def add(self, *, platform: str, scope: str, cost: float, day: date | None = None) -> None:
        today = self._today()
        if cost <= 0 or (day is not None and day != today):
            return
        self._process += cost
        self._scopes[(platform, scope)] = self._scopes.get((platform, scope), 0.0) + cost

    def spent(self, *, platform: str | None = None, scope: str | None = None) -> float:
        self._today()
        if platform is None:
            return self._process
        return self._scopes.get((platform, scope or ""), 0.0)

    def observe(self, event: Event, tags: DebateTags) -> None:
        for at, usage in call_usages([event]):
            self.add(platform=tags.platform, scope=tags.scope, cost=usage.cost_usd, day=at.date())

    def seed(self, debates: Iterable[tuple[DebateRecord, Sequence[Event]]]) -> None:
        """Count what stored debates spent today (at start-up)."""
        for record, events in debates:
            for at, usage in call_usages(events):
                self.add(
                    platform=record.binding.platform,
                    scope=record.binding.scope,
                    cost=usage.cost_usd,
                    day=at.date(),
                )

    def check(self, *, platform: str, scope: str) -> None:
        """Raise AdmissionError, with a message for the person, once a daily budget is spent."""
        limits = self._limits
        wait = _until_midnight(self._now())
        if limits.daily_cost_per_process > 0 and self.spent() >= limits.daily_cost_per_process:
            raise AdmissionError(
                f"Rostra's daily budget of {format_cost(limits.daily_cost_per_process)} is spent"
                f" ({format_cost(self.spent())} today); new debates can start again in {wait} (UTC midnight)."
            )
        here = self.spent(platform=platform, scope=scope)
        if scope and limits.daily_cost_per_scope > 0 and here >= limits.daily_cost_per_scope:
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
