"""Rate windows modelled on a platform's published limits, shared by every debate of one bot.

A rate window is a sliding window (at most `limit` calls in any `per` seconds) named by what the platform
limits: a Slack workspace's method (`chat.update`), a channel's posts, a Discord webhook. Work is
prioritised: a final state (a turn's text, a vote card, a closing card) waits its turn (`take`);
an interim state (streamed text, a running tally) goes only when the window has room to spare for
finals (`try_take`), otherwise it is held and coalesced with the next one, or dropped when the final
comes. A 429's Retry-After pauses the whole rate window (`pause`), not just the one call. Discord's
global window is taken where discord.py sends each request (adapters.metering), so there an interim
state only asks whether it has room (`has_room`).

A budget the platform gives the whole bot (Slack's Tier 3 per workspace, Discord's global requests
per second per bot token) is spent by every worker of a deployment at once: such a window takes a
`share`, this worker's fraction of it (adapters.delivery.shares; core.workers.BudgetShare), so N
workers together stay within the published limit. A window bound to one channel or webhook is used
only by the worker that runs that channel's debate and is not split.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from adapters.delivery.outage import SharedRoute, ShownElsewhere

Limit = tuple[int, float]  # at most this many calls in any this many seconds


def monotonic() -> float:
    """`time.monotonic()`, looked up at each call (a simulator may make it virtual)."""
    return time.monotonic()


@dataclass
class RateWindow:
    limit: int
    per: float
    now: Callable[[], float] = monotonic
    hits: list[float] = field(default_factory=list)
    paused_until: float = 0.0
    taken: int = 0
    skipped: int = 0
    share: Callable[[], float] | None = None
    """This worker's fraction of a budget every worker spends (None: the whole limit is this one's)."""
    route: SharedRoute = field(default_factory=SharedRoute)
    """The outages of what this window limits (a Discord webhook), shared by the debates using it."""

    @property
    def allowed(self) -> int:
        """The calls this worker may make in any `per` seconds: its share of `limit` (at least one)."""
        if self.share is None:
            return self.limit
        return max(1, int(self.limit * self.share()))

    def _wait(self, now: float, reserve: int = 0) -> float:
        """Seconds until a call may go (0: now), keeping `reserve` calls of the window spare."""
        self.hits = [t for t in self.hits if now - t < self.per]
        if now < self.paused_until:
            return self.paused_until - now
        room = self.allowed - reserve
        if len(self.hits) < room:
            return 0.0
        if room <= 0:
            return self.per
        return self.hits[len(self.hits) - room] + self.per - now

    def try_take(self, *, spare: float = 0.4) -> bool:
        """For an interim state: take a call only if `spare` of the window stays free for finals."""
        if not self.has_room(spare=spare):
            return False
        self.note()
        return True

    def has_room(self, *, spare: float = 0.4) -> bool:
        """Whether an interim state may go now, keeping `spare` of the window free, when the call is
        taken later where the SDK sends it (Discord's global window: adapters.metering)."""
        if self._wait(self.now(), reserve=int(self.allowed * spare)) > 0:
            self.skipped += 1
            return False
        return True

    async def take(self) -> float:
        """For a final state: wait for a free call (and for any pause), then take it; when."""
        while (wait := self._wait(self.now())) > 0:  # noqa: ASYNC110 - sleeps exactly until a slot frees
            await asyncio.sleep(wait)
        return self.note()

    def note(self) -> float:
        """Count a call made without waiting (its pacing is left to the SDK); when."""
        now = self.now()
        self.hits.append(now)
        self.taken += 1
        return now

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Take a call for a request the SDK makes later inside the block (one of several steps):
        its slot is stamped again when the block ends, since the platform counts the request when
        it arrives, which may be well after the take."""
        taken_at = await self.take()
        try:
            yield
        finally:
            self.restamp(taken_at)

    def restamp(self, taken_at: float) -> None:
        """Count the call taken at `taken_at` from now on instead: the platform counted it when it
        arrived, which may be well after the take (connections, queues)."""
        if taken_at in self.hits:
            self.hits.remove(taken_at)
            bisect.insort(self.hits, self.now())

    def pause(self, seconds: float) -> None:
        """A 429 said wait `seconds`: nobody uses this rate window until then."""
        self.paused_until = max(self.paused_until, self.now() + seconds)


class RateWindows:
    """The rate windows of one bot (one Slack workspace, one Discord application), by name; `limit_of`
    maps a name to its published limit, `share_of` a name to this worker's share of it (None: not
    split between workers)."""

    def __init__(
        self,
        limit_of: Callable[[str], Limit],
        share_of: Callable[[str], Callable[[], float] | None] = lambda _: None,
    ) -> None:
        self._limit_of = limit_of
        self._share_of = share_of
        self._rates: dict[str, RateWindow] = {}

    def __getitem__(self, name: str) -> RateWindow:
        window = self._rates.get(name)
        if window is None:
            limit, per = self._limit_of(name)
            window = self._rates[name] = RateWindow(limit, per, share=self._share_of(name))
        return window

    def items(self) -> list[tuple[str, RateWindow]]:
        return list(self._rates.items())


class FencedWindow:
    """One debate's use of a shared rate window: once `take` has waited for room (a pause of the
    process may have passed meanwhile), it asks `fence()` whether this process still shows the
    debate, and raises ShownElsewhere if not, so the call it was taken for is not made."""

    def __init__(self, window: RateWindow, fence: Callable[[], Awaitable[bool]]) -> None:
        self._window = window
        self._fence = fence

    def try_take(self, *, spare: float = 0.4) -> bool:
        return self._window.try_take(spare=spare)

    async def take(self) -> float:
        taken = await self._window.take()
        if not await self._fence():
            raise ShownElsewhere
        return taken


class FencedWindows:
    """The rate windows as one debate's sender uses them (`FencedWindow`)."""

    def __init__(self, windows: RateWindows, fence: Callable[[], Awaitable[bool]]) -> None:
        self._windows = windows
        self._fence = fence

    def __getitem__(self, name: str) -> FencedWindow:
        return FencedWindow(self._windows[name], self._fence)
