"""Slack Web API metrics: each call's outcome and latency, each error code Slack answered (most come
with HTTP 200: `not_in_channel`, `invalid_blocks`), each 429 waited out and each retry.

slack_sdk makes its HTTP requests in a fresh aiohttp session per call, so the hooks sit on the
client (`api_call`) and on the retry handlers' "prepare for the next attempt" step. The same two
places ask the debate's lease fence (`adapters.delivery.fence`): after each of the SDK's retry waits,
a call whose debate another process now shows is not sent again, and it fails with ShownElsewhere.
"""

from __future__ import annotations

import re
import time
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from adapters.delivery import fence as request_fence
from core.observe import platforms

PLATFORM = "slack"
_ERROR_CODE = re.compile(r"^[a-z0-9_]{1,60}$")  # Slack's codes; anything else is "other" (a label)


def error_code(response: Any) -> str:
    """The `error` of a Slack answer, as a metric label."""
    try:
        error = response.get("error") if response is not None else None
    except Exception:  # an answer that is no JSON object
        error = None
    text = str(error or "unknown")
    return text if _ERROR_CODE.match(text) else "other"


class MeteredWebClient(AsyncWebClient):
    async def api_call(self, api_method: str, **kwargs: Any) -> Any:
        # every call a debate's delivery makes asks the fence as it starts (free while the lease is
        # fresh): a process paused between the queue's check and the call, woken after a takeover,
        # sends nothing more (adapters.delivery.fence)
        await request_fence.check()
        started = time.perf_counter()
        try:
            response = await super().api_call(api_method, **kwargs)
        except SlackApiError as exc:
            status = int(getattr(exc.response, "status_code", 0) or 0)
            platforms.request(PLATFORM, api_method, status, time.perf_counter() - started)
            platforms.api_error(PLATFORM, api_method, error_code(exc.response))
            await request_fence.check()  # a retry left unsent: another process shows the debate
            raise
        except Exception:
            platforms.request(PLATFORM, api_method, 0, time.perf_counter() - started)
            await request_fence.check()
            raise
        platforms.request(
            PLATFORM, api_method, int(getattr(response, "status_code", 200)), time.perf_counter() - started
        )
        return response


def counting_retries(handler: AsyncRetryHandler) -> AsyncRetryHandler:
    """The same handler (same type, same decisions), reporting each retry it makes.

    A rate-limit retry is a request Slack answered 429: it is reported as one too.
    """
    prepare = handler.prepare_for_next_attempt_async

    async def counted(**kwargs: Any) -> None:
        response = kwargs.get("response")
        method = str(getattr(kwargs.get("request"), "url", "")).rsplit("/", 1)[-1] or "unknown"
        status = int(getattr(response, "status_code", 0) or 0)
        if status:
            platforms.request(PLATFORM, method, status, 0.0)
        platforms.retry(PLATFORM, method)
        await prepare(**kwargs)
        if not await request_fence.still_ours():  # paused in the wait, taken over: not sent again
            kwargs["state"].next_attempt_requested = False

    handler.prepare_for_next_attempt_async = counted  # type: ignore[method-assign]
    return handler
