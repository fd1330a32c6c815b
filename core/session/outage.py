"""A debate's store writes, with the store's faults waited out.

While the store is unavailable nothing is stored, so nothing is shown and no model is asked (every
path to one goes through here), and the debate clock stands still. Past `storage.outage_limit` the
debate stops (`interrupted`, resumable); a lost lease (another process owns the debate now) stops
it without another write.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from core.clock import DebateClock
from core.errors import LeaseLost, StoreError, StoreGaveUp, StoreUnavailable
from core.session.dbfile import DatabaseFile
from core.session.notices import PendingNotices
from core.settings import StorageSettings

log = logging.getLogger(__name__)

T = TypeVar("T")


class StoreGuard:
    """Runs one debate's store writes; says when the store or the lease stopped the debate."""

    def __init__(
        self,
        debate_id: str,
        limits: StorageSettings,
        clock: DebateClock,
        notices: PendingNotices,
        stop_debate: Callable[[], None],
    ) -> None:
        self._debate_id = debate_id
        self._limits = limits
        self._clock = clock
        self._notices = notices
        self._stop_debate = stop_debate  # cancels the format's task (not the caller's)
        self.failure: str | None = None  # the store stayed unavailable: the debate stops here
        self.lease_lost = False  # another process owns the debate now: not a word more from here
        self.single_try = False  # shutting down or stopping: a write is tried once, not waited out
        self._file = DatabaseFile.of(limits.url, limits.heartbeat_seconds)  # SQLite: deleted or replaced?

    @property
    def stopped(self) -> bool:
        """Whether the store or the lease stopped the debate."""
        return self.failure is not None or self.lease_lost

    async def write(self, write: Callable[[], Awaitable[T]]) -> T:
        """Run one store write; transient faults are retried with backoff while the debate pauses."""
        if self.lease_lost:
            raise LeaseLost(f"debate {self._debate_id} is owned by another process")
        if self.failure is not None and not self.single_try:
            raise StoreGaveUp(self.failure)
        limits = self._limits
        delay = limits.retry_initial
        began: float | None = None
        paused_here = False
        while True:
            try:
                self._same_file()
                result = await write()
            except StoreUnavailable as exc:
                if self.single_try:
                    raise
                now = time.monotonic()
                if began is None:
                    began = now
                    log.warning("debate %s paused: %s", self._debate_id, exc)
                    if not self._clock.paused:
                        self._clock.pause()
                        paused_here = True
                waited = now - began
                if waited >= limits.outage_limit:
                    self.give_up(f"the database was unavailable for {waited:.0f} s ({exc})")
                    raise StoreGaveUp(self.failure or str(exc)) from exc
                await asyncio.sleep(min(delay, limits.outage_limit - waited))
                delay = min(delay * 2, limits.retry_max)
                continue
            except LeaseLost:
                self.lose_lease()
                raise
            except StoreError as exc:
                if "does not follow" not in str(exc):
                    raise
                # another process wrote this debate's next events (it took over, and may have ended it)
                self.lose_lease()
                raise LeaseLost(f"debate {self._debate_id} went on in another process") from exc
            if began is not None:
                waited = time.monotonic() - began
                if paused_here:
                    self._clock.resume()
                log.warning("debate %s: the store is back after %.1f s", self._debate_id, waited)
                self._notices.store_back(waited)
            return result

    def _same_file(self) -> None:
        """The SQLite file written to must still be the one opened: else, a store outage."""
        problem = self._file.check() if self._file is not None else None
        if problem is not None:
            raise StoreUnavailable(problem)

    def give_up(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason
            log.error("debate %s stops: %s", self._debate_id, reason)
        self._stop_debate()

    def lose_lease(self) -> None:
        if not self.lease_lost:
            self.lease_lost = True
            log.warning("debate %s: another process owns it now; this one stops", self._debate_id)
        self._stop_debate()
