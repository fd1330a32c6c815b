"""The ballots' clock in a debate other processes may vote in: once a window's time is up, the votes
people cast through other processes and left in the store are taken before the window closes.

A vote cast elsewhere is acknowledged once it is stored (core.manager.DebateManager.cast_vote); the
owner normally takes it at once (a NOTIFY, or the next poll). Should that path be slow or down when
the window ends (the owner's LISTEN connection lost with seconds left, say), the votes stored by then
are counted here all the same: no vote a person was told about is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from core.clock import Clock
from core.errors import StoreError

log = logging.getLogger(__name__)


class WindowClock:
    """A clock whose `sleep` (a vote window's wait) ends by taking the votes left in the store."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.take_relayed: Callable[[], Awaitable[None]] | None = None  # set by the debate's manager
        # One taking of the left votes at a time (the vote loop, a window's end, a takeover may each
        # take some): two at once would cast one person's votes out of the order they were left.
        self.taking = asyncio.Lock()

    def now(self) -> float:
        return self._clock.now()

    async def sleep(self, seconds: float) -> None:
        await self._clock.sleep(seconds)
        if self.take_relayed is None:
            return
        try:
            await self.take_relayed()
        except StoreError as exc:
            log.warning("could not take the votes left in the store before a window closed: %s", exc)
