"""The platform a debate is shown on (Discord, Slack), down or back, as its front end reports it.

Delivery failures are the front end's to see; what they mean for the debate is decided here, the
same way as a store outage: while the platform is down the debate waits before its next event (so
nothing new is stored and no model is asked) and its clock stands still. The front end probes the
platform and reports it back, or gives up past its limit: then the debate stops, resumable
(`interrupted`), and says why once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from core.clock import DebateClock

log = logging.getLogger(__name__)


class PlatformGate:
    """Holds a debate's next event while its platform is down."""

    def __init__(self, debate_id: str, clock: DebateClock, give_up: Callable[[str], None]) -> None:
        self._debate_id = debate_id
        self._clock = clock
        self._give_up = give_up  # stops the debate, resumable (the session's store guard does it)
        self._up = asyncio.Event()
        self._up.set()
        self._paused_here = False
        self.failure: str | None = None  # the platform stayed down: why the debate stopped

    @property
    def down(self) -> bool:
        return not self._up.is_set()

    def report_down(self, reason: str) -> None:
        """The platform failed repeatedly: pause the debate (no new event, the clock stopped)."""
        if self.down or self.failure is not None:
            return
        log.warning("debate %s paused: %s", self._debate_id, reason)
        self._up.clear()
        if not self._clock.paused:
            self._clock.pause()
            self._paused_here = True

    def report_back(self) -> None:
        """The platform answers again: the debate goes on."""
        if self.down:
            log.warning("debate %s: the platform is back", self._debate_id)
            self._open()

    def report_lost(self, reason: str) -> None:
        """The platform stayed down past the front end's limit: the debate stops, resumable."""
        if self.failure is None:
            self.failure = reason
            self._open()
            self._give_up(reason)

    async def wait(self) -> None:
        """Return once the platform is up (at once when it is)."""
        await self._up.wait()

    def _open(self) -> None:
        self._up.set()
        if self._paused_here:
            self._paused_here = False
            self._clock.resume()
