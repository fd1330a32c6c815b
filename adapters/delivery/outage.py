"""A platform outage as one state, for both chat front ends.

One failure is the platform's client's to retry (discord.py, slack_sdk). When a final state (a
turn's text, a card, a ballot) still cannot be shown, the platform is down: the debate is told
(`DebateHandle.platform_down`: no model calls, the clock stopped) and the same operation is tried
again with backoff; what queued behind it waits in order. The first success reports the platform
back and the owed items follow in order, their interim states (streamed edits, countdown ticks)
dropped until the backlog is shown. Past the limit the debate is told to stop
(`platform_lost`: `interrupted`, resumable); after that every operation is tried once.

A process paused past its lease (its debate taken over by another, which shows it now) finds out
before each retry (`fenced_by`) and stops trying (`ShownElsewhere`).

Debates that share a route (a Discord channel's one persona webhook) share its outages
(`SharedRoute`): when one finds it down the others pause at once, instead of each finding out only
after its own request has waited behind the others' retries; when one gets through, all go on.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from core.session import DebateHandle

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class OutageLimits:
    """How a platform outage is waited out (seconds)."""

    limit: float = 600.0  # down this long: the debate stops, resumable
    first_probe: float = 2.0  # the first wait before trying again (doubles each time)
    longest_probe: float = 30.0


DEFAULT_LIMITS = OutageLimits()


class ShownElsewhere(Exception):
    """Another process has taken the debate over and shows it: this one shows nothing more."""


class SharedRoute:
    """The debates delivering through one route, which is down or up for all of them at once."""

    def __init__(self) -> None:
        self._members: weakref.WeakSet[PlatformOutage] = weakref.WeakSet()  # a finished debate's goes with it

    def join(self, member: PlatformOutage) -> None:
        self._members.add(member)

    def leave(self, member: PlatformOutage) -> None:
        """A debate stopped delivering; if it was the one probing, the others go on (and find out)."""
        self._members.discard(member)
        if member.down and not member.paused_by_others:
            self.back(member)

    def down(self, source: PlatformOutage, exc: BaseException) -> None:
        for member in [m for m in self._members if m is not source]:
            member.others_down(exc)

    def back(self, source: PlatformOutage) -> None:
        for member in [m for m in self._members if m is not source]:
            member.others_back()

    def lost(self, source: PlatformOutage, reason: str) -> None:
        for member in [m for m in self._members if m is not source]:
            member.others_lost(reason)


class PlatformOutage:
    """One debate's view of its platform: up, down (probing), or given up."""

    def __init__(
        self,
        platform: str,
        limits: OutageLimits | None = None,
        *,
        shared: SharedRoute | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._shared = shared
        if shared is not None:
            shared.join(self)
        self.paused_by_others = False  # down because another debate on the shared route found it so
        self._platform = platform
        self._limits = limits or DEFAULT_LIMITS
        self._sleep = sleep
        self._now = now
        self._handle: DebateHandle | None = None
        self.down = False
        self.lost = False  # stayed down past the limit: the debate was told to stop
        self.catching_up = False  # back, the owed items not all shown yet: interim states dropped
        self._down_since = 0.0
        self._fence: Callable[[], Awaitable[bool]] | None = None

    @property
    def platform(self) -> str:
        return self._platform

    def fenced_by(self, fence: Callable[[], Awaitable[bool]]) -> None:
        """Ask `fence()` before each retry whether this process still shows the debate."""
        self._fence = fence

    def attach(self, handle: DebateHandle) -> None:
        self._handle = handle

    def leave(self) -> None:
        """This debate delivers no more (its sink closed)."""
        if self._shared is not None:
            self._shared.leave(self)

    def others_down(self, exc: BaseException) -> None:
        """Another debate on the shared route found it down: pause too."""
        if not (self.down or self.lost):
            self.paused_by_others = True
            self._went_down(exc, tell_others=False)

    def others_back(self) -> None:
        """Another debate on the shared route got through: go on (this one's own failures, if any,
        are still probed by its own `carry`)."""
        if self.down and self.paused_by_others:
            self.paused_by_others = False
            self._came_back(tell_others=False)

    def others_lost(self, reason: str) -> None:
        if self.down and self.paused_by_others and not self.lost:
            self._stop(reason)

    def caught_up(self) -> None:
        """Everything owed since the outage is shown (the delivery queue ran empty)."""
        self.catching_up = False

    async def carry(
        self, attempt: Callable[[], Awaitable[T]], is_outage: Callable[[BaseException], bool]
    ) -> T:
        """Run `attempt` (one final state); while it fails with an outage, wait and try it again."""
        delay = self._limits.first_probe
        began: float | None = None
        while True:
            try:
                result = await attempt()
            except Exception as exc:
                if self.lost or not is_outage(exc):
                    raise
                now = self._now()
                if began is None:
                    began = now
                    self._went_down(exc)
                waited = now - began
                if waited >= self._limits.limit:
                    self._give_up(waited, exc)
                    raise
                await self._sleep(min(delay, self._limits.limit - waited))
                if self._fence is not None and not await self._fence():
                    raise ShownElsewhere from exc
                delay = min(delay * 2, self._limits.longest_probe)
                continue
            if self.down:
                self.paused_by_others = False
                self._came_back()
            return result

    def _went_down(self, exc: BaseException, *, tell_others: bool = True) -> None:
        if self.down:
            self.paused_by_others = False  # its own request failed too: its own carry probes now
            return
        self.down = True
        self.catching_up = True
        self._down_since = self._now()
        if tell_others:
            log.warning("%s is failing (%r); the debate pauses while it is probed", self._platform, exc)
        else:
            log.warning(
                "%s is failing for another debate on this route (%r); this one pauses too",
                self._platform,
                exc,
            )
        if self._handle is not None and not self._handle.done:
            self._handle.platform_down(f"{self._platform} is not answering ({exc})")
        if tell_others and self._shared is not None:
            self._shared.down(self, exc)

    def _came_back(self, *, tell_others: bool = True) -> None:
        self.down = False
        if tell_others:
            waited = self._now() - self._down_since
            log.warning("%s answers again after %.1f s; sending what is owed", self._platform, waited)
        if self._handle is not None:
            self._handle.platform_back()
        if tell_others and self._shared is not None:
            self._shared.back(self)

    def _give_up(self, waited: float, exc: BaseException) -> None:
        reason = f"{self._platform} was unavailable for {waited:.0f} s"
        log.error("%s (%r); the debate stops", reason, exc)
        self._stop(reason)
        if self._shared is not None:
            self._shared.lost(self, reason)

    def _stop(self, reason: str) -> None:
        """Down past the limit: the debate is told to stop; operations are tried once from now on."""
        self.down = self.catching_up = False
        self.lost = True
        if self._handle is not None and not self._handle.done:
            self._handle.platform_lost(reason)
