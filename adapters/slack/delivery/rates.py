"""Slack's published rate limits as rate windows shared by every debate in a workspace (one Web API
client per workspace), and the retry handler that makes a 429 pause the whole rate window."""

from __future__ import annotations

import weakref
from collections.abc import Callable

from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from adapters.delivery import shares
from adapters.delivery.rates import Limit, RateWindows

# chat.update, chat.delete, reactions.add, files.list, the read-backs: per workspace
TIER3: Limit = (50, 60.0)
POSTS_PER_CHANNEL: Limit = (1, 1.0)  # chat.postMessage: about one per second per channel
DISTRIBUTED_READ_BACKS: Limit = (1, 60.0)
"""conversations.replies (and .history) for a distributed app outside the Marketplace (Slack's 2025
rule): one request a minute (and at most 15 messages a request), per workspace."""
READ_BACK_MESSAGES = 15
READ_BACK_METHODS = frozenset({"conversations.replies", "conversations.history"})
TIER3_METHODS = frozenset({"chat.update", "chat.delete", "reactions.add", "files.list", *READ_BACK_METHODS})
TIER4: Limit = (100, 60.0)  # a file upload's two calls: per workspace
UPLOAD_METHODS = ("files.getUploadURLExternal", "files.completeUploadExternal")


def post_rate(channel: str) -> str:
    return f"chat.postMessage:{channel}"


def slack_limit(name: str) -> Limit:
    if name in UPLOAD_METHODS:
        return TIER4
    return POSTS_PER_CHANNEL if name.startswith("chat.postMessage:") else TIER3


def limits_for(install: str) -> Callable[[str], Limit]:
    """The workspace's limits for an install of this kind (`slack.install`): a distributed app
    reads threads back at most once a minute."""

    def limit(name: str) -> Limit:
        if install == "distributed" and name in READ_BACK_METHODS:
            return DISTRIBUTED_READ_BACKS
        return slack_limit(name)

    return limit


def slack_share(name: str) -> Callable[[], float] | None:
    """The workspace's Tier 3 budget is spent by every Slack worker: split. A channel's posts come
    from the one worker that runs its debate: not split."""
    return None if name.startswith("chat.postMessage:") else shares.of("slack")


def scaled(limit: Limit, time_factor: float) -> Limit:
    """The same limit with time compressed by `time_factor` (tests run Slack's rules faster)."""
    return limit[0], limit[1] * time_factor


_RATES: weakref.WeakKeyDictionary[AsyncWebClient, RateWindows] = weakref.WeakKeyDictionary()


def share_rates(client: AsyncWebClient, rates: RateWindows) -> None:
    """Every debate delivered through `client` (one workspace) uses `rates`."""
    _RATES[client] = rates


def rates_of(client: AsyncWebClient) -> RateWindows:
    """The workspace's rate windows (one Web API client per workspace token)."""
    rates = _RATES.get(client)
    if rates is None:
        rates = _RATES[client] = RateWindows(slack_limit, slack_share)
    return rates


def rate_name(request: HttpRequest) -> str | None:
    method = request.url.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    if method in TIER3_METHODS or method in UPLOAD_METHODS:
        return method
    if method == "chat.postMessage":
        channel = (request.body_params or {}).get("channel")
        return post_rate(str(channel)) if channel else None
    return None


class WindowedRateLimitRetryHandler(AsyncRateLimitErrorRetryHandler):
    """slack_sdk's own 429 handler (it waits Retry-After and retries the call); besides, the whole
    rate window the call belongs to pauses for that long, so other debates do not run into it too."""

    def __init__(self, rates: RateWindows, max_retry_count: int) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.rates = rates

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        if response is not None and (name := rate_name(request)) is not None:
            headers = {k.lower(): v for k, v in response.headers.items()}
            retry_after = headers.get("retry-after", ["1"])
            value = retry_after[0] if isinstance(retry_after, list) else retry_after
            self.rates[name].pause(float(value) if str(value).replace(".", "", 1).isdigit() else 1.0)
        await super().prepare_for_next_attempt_async(
            state=state, request=request, response=response, error=error
        )
