"""What every HTTP double of the outside world shares, written once.

A fake platform (Slack's Web API, Discord's REST API, Anthropic's Messages API) is an aiohttp app on
an ephemeral loopback port inside the test's own event loop. It records every request it receives,
can be told to answer some of them with faults (optionally after carrying them out, or by dropping
the connection), enforces sliding-window rate limits, and lets a test wait until its state holds a
condition (checked on every request and every 50 ms). Each fake adds only the platform's own
answers and rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

from aiohttp import web

CallT = TypeVar("CallT")


@dataclass
class Window:
    """A sliding-window rate limit: at most `limit` requests in any `per` seconds."""

    name: str
    limit: int
    per: float
    hits: list[float] = field(default_factory=list)

    def _trim(self, now: float) -> None:
        self.hits = [t for t in self.hits if now - t < self.per]

    def retry_after(self, now: float) -> float:
        """Seconds until one more request fits (0 when it fits now)."""
        self._trim(now)
        if len(self.hits) < self.limit:
            return 0.0
        return max(0.001, self.hits[0] + self.per - now)

    def take(self, now: float) -> None:
        self.hits.append(now)

    def remaining(self, now: float) -> int:
        self._trim(now)
        return max(0, self.limit - len(self.hits))

    def reset_after(self, now: float) -> float:
        self._trim(now)
        return round(self.hits[0] + self.per - now, 3) if self.hits else 0.0


@dataclass
class Fault(Generic[CallT]):
    """An error answer for the requests it matches, `times` times (None: every time)."""

    matches: Callable[[CallT], bool]
    status: int
    body: Any  # JSON, or a str sent as HTML (what a proxy in front of the platform answers)
    headers: dict[str, str] = field(default_factory=dict)
    after_store: bool = False  # carry the request out, then answer the error anyway
    drop: bool = False  # close the connection instead of answering
    edge: bool = False  # answered in front of the platform, before it looks at the request
    times: int | None = 1
    until: float | None = None  # time.monotonic() after which the fault is over (an outage's end)


class FakeServer(Generic[CallT]):
    """The lifecycle, request log, faults, rate windows and waiting shared by every fake."""

    def __init__(self) -> None:
        self.requests: list[CallT] = []
        self.rate_limited: list[CallT] = []  # every request answered 429 by an enforced limit
        self.faults: list[Fault[CallT]] = []
        self.windows: dict[str, Window] = {}
        self.root = ""  # http://127.0.0.1:<port> once started
        self.app = web.Application()
        self._runner: web.AppRunner | None = None
        self._changed = asyncio.Event()

    # --- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.root = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # --- recording and waiting --------------------------------------------------------------------

    def record(self, call: CallT) -> CallT:
        self.requests.append(call)
        self.changed()
        return call

    def changed(self) -> None:
        """The fake's state changed: waiting predicates are checked again now."""
        self._changed.set()

    async def wait_until(self, predicate: Callable[[], bool], within: float = 10.0) -> None:
        """Wait (at most `within` seconds) until `predicate()` holds; it is checked after every
        request and every 50 ms."""
        async with asyncio.timeout(within):
            while not predicate():
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), 0.05)

    # --- faults -----------------------------------------------------------------------------------

    def add_fault(self, fault: Fault[CallT]) -> None:
        self.faults.append(fault)

    def fault_for(self, call: CallT) -> Fault[CallT] | None:
        """The first fault matching `call`, spent once."""
        now = time.monotonic()
        self.faults = [f for f in self.faults if f.until is None or f.until > now]
        for fault in self.faults:
            if fault.matches(call):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self.faults.remove(fault)
                return fault
        return None

    @staticmethod
    def drop_connection(request: web.Request) -> None:
        """The client sees the server disconnect without an answer."""
        assert request.transport is not None
        request.transport.close()

    # --- rate limits ------------------------------------------------------------------------------

    def window(self, name: str, limit: int, per: float) -> Window:
        window = self.windows.get(name)
        if window is None:
            window = self.windows[name] = Window(name, limit, per)
        return window

    def exhaust_window(self, name: str, limit: int, per: float, now: float) -> None:
        """Spend a whole window now, as another process with the same credentials would."""
        self.windows[name] = Window(name, limit, per, [now] * limit)

    @staticmethod
    def admit(windows: Iterable[Window], now: float) -> tuple[Window, float] | None:
        """The first window the request does not fit in and its wait; or None, and every window
        counts the request."""
        windows = list(windows)
        for window in windows:
            wait = window.retry_after(now)
            if wait > 0:
                return window, wait
        for window in windows:
            window.take(now)
        return None
