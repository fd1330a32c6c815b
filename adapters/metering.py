"""Platform API metrics at the HTTP layer: every request, its status, 429s and retries.

The SDKs keep their own rate-limit handling; these hooks only watch it and report to
`core.observe.platforms` (a no-op until the bot plugs metrics or traces in).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import aiohttp

from adapters.delivery.attempts import answer_lost, count_request
from adapters.delivery.rates import RateWindow
from core.events import Event, TurnDelta
from core.observe import platforms

_WORD = re.compile(r"^[a-z_.\-]{1,32}$")
_VERSION = re.compile(r"^v\d+$")


def route_of(path: str) -> str:
    """A URL path as a metric label: ids and tokens become `:id` (no secret ever reaches a label)."""
    parts = [p for p in path.split("/") if p and p != "api" and not _VERSION.match(p)]
    return "/" + "/".join(p if _WORD.match(p) else ":id" for p in parts)


def platform_trace(
    platform: str, *, sdk_retries: bool = True, paced_by: Callable[[str], RateWindow | None] | None = None
) -> aiohttp.TraceConfig:
    """An aiohttp TraceConfig reporting each request; with `sdk_retries`, a 429 or a 5xx counts as
    a retry too (discord.py waits those out and sends the request again). `paced_by` names the rate
    window a request (by its path) takes as it is sent, retries included: taken there, not where the
    call is decided, since the SDK may hold it in its own queues first and then send several at once."""
    trace = aiohttp.TraceConfig()

    async def on_start(session: aiohttp.ClientSession, ctx: SimpleNamespace, params: Any) -> None:
        window = paced_by(params.url.path) if paced_by is not None else None
        if window is not None:
            ctx.rostra_paced = (window, await window.take())
        ctx.rostra_started = time.perf_counter()
        count_request()  # a retried call counts more than one (adapters.delivery.attempts)

    def answered(ctx: SimpleNamespace) -> None:
        paced = getattr(ctx, "rostra_paced", None)
        if paced is not None:
            paced[0].restamp(paced[1])  # counted from its answer: it reached the platform by then

    async def on_end(session: aiohttp.ClientSession, ctx: SimpleNamespace, params: Any) -> None:
        answered(ctx)
        method = f"{params.method} {route_of(params.url.path)}"
        status = int(params.response.status)
        if status >= 500:
            answer_lost()
        platforms.request(platform, method, status, time.perf_counter() - ctx.rostra_started)
        if sdk_retries and (status == 429 or status >= 500):
            platforms.retry(platform, method)

    async def on_error(session: aiohttp.ClientSession, ctx: SimpleNamespace, params: Any) -> None:
        answered(ctx)
        answer_lost()
        method = f"{params.method} {route_of(params.url.path)}"
        platforms.request(platform, method, 0, time.perf_counter() - ctx.rostra_started)

    trace.on_request_start.append(on_start)
    trace.on_request_end.append(on_end)
    trace.on_request_exception.append(on_error)
    return trace


def record_delivery(platform: str, event: Event, *, since: float = 0.0) -> None:
    """An event's message reached the channel: report how long after it was stored.

    Events stored before `since` (caught up after a restart) are not a measure of delivery lag.
    """
    stored = event.at.timestamp()
    if stored > 0 and stored >= since and not isinstance(event, TurnDelta):
        platforms.delivered(platform, event, time.time() - stored)
