"""The lease fence on every request a debate's delivery sends, the SDKs' own retries included.

The delivery queue asks before each item whether this process still shows the debate
(`adapters.delivery.queue`), and an outage's retries ask before each try (`adapters.delivery.outage`).
But discord.py and slack_sdk also repeat a failed request themselves (a 5xx, a 429), after a wait: a
process paused (SIGSTOP) in that wait past its lease, and woken after another process took the debate
over and showed it, would send the request when it wakes — a half-written turn posted under the
finished debate. So the queue binds its fence to its task (`bind`), and the HTTP layer asks it before
each request the SDK sends (`check`): Discord through the client's aiohttp trace (`guard`), Slack
as each Web API call starts and after each of the SDK's retry waits
(`adapters.slack.delivery.metered`). Asking costs nothing while
the lease is fresh (no database round trip); outside a debate's delivery nothing is asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from types import SimpleNamespace
from typing import Any

import aiohttp

from adapters.delivery.outage import ShownElsewhere

Fence = Callable[[], Awaitable[bool]]

_FENCE: ContextVar[Fence | None] = ContextVar("rostra_delivery_fence", default=None)


def bind(fence: Fence | None) -> None:
    """Requests sent from the running task (and tasks it starts) from now on ask `fence` first."""
    _FENCE.set(fence)


async def still_ours() -> bool:
    """Whether the debate the running task delivers (if any) is still shown by this process."""
    fence = _FENCE.get()
    return fence is None or await fence()


async def check() -> None:
    """Raise ShownElsewhere if another process shows the debate the running task delivers."""
    if not await still_ours():
        raise ShownElsewhere


def guard(trace: aiohttp.TraceConfig) -> aiohttp.TraceConfig:
    """`trace`, asking the fence as each request starts (after the trace's own start hooks)."""

    async def on_start(session: aiohttp.ClientSession, ctx: SimpleNamespace, params: Any) -> None:
        await check()

    trace.on_request_start.append(on_start)
    return trace
