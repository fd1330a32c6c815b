"""slack_sdk's own retry handlers, kept from re-sending a call that may already have been carried out.

A dropped connection or a 500 after `chat.postMessage` does not say whether Slack posted the
message; retrying blindly posts it twice. Those calls are not retried by the SDK: the sender finds
out whether the post landed (by its metadata marker) and posts again only if it did not. Every
other call is safe to repeat (an edit, a reaction, a read) and the SDK retries it. 429s are retried
for every call (Slack did nothing), after their Retry-After.
"""

from __future__ import annotations

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from adapters.delivery.rates import RateWindows
from adapters.slack.delivery.rates import WindowedRateLimitRetryHandler

NOT_REPEATABLE = ("chat.postMessage", "files.completeUploadExternal")
CONNECTION_RETRIES = 2
SERVER_ERROR_RETRIES = 2


def repeatable(request: HttpRequest) -> bool:
    return not request.url.split("?")[0].rstrip("/").endswith(NOT_REPEATABLE)


class _OnlyRepeatable(AsyncRetryHandler):
    """Retries a call only when repeating it cannot duplicate what it did (see `repeatable`)."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return repeatable(request) and await super()._can_retry_async(
            state=state, request=request, response=response, error=error
        )


class RepeatableConnectionErrorRetryHandler(_OnlyRepeatable, AsyncConnectionErrorRetryHandler):
    pass


class RepeatableServerErrorRetryHandler(_OnlyRepeatable, AsyncServerErrorRetryHandler):
    pass


def retry_handlers(rate_limit_retries: int, rates: RateWindows) -> list[AsyncRetryHandler]:
    return [
        RepeatableConnectionErrorRetryHandler(max_retry_count=CONNECTION_RETRIES),
        RepeatableServerErrorRetryHandler(max_retry_count=SERVER_ERROR_RETRIES),
        WindowedRateLimitRetryHandler(rates, max_retry_count=rate_limit_retries),
    ]
