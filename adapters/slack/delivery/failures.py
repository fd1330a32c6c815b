"""Slack's answers that decide a debate's delivery: the errors after which nothing more can be shown
in a thread, the failures that mean Slack itself is down, and the notice of a refused message."""

from __future__ import annotations

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError

NETWORK_ERRORS = (SlackClientError, aiohttp.ClientError, TimeoutError)


class ReadBackDeferred(Exception):
    """A post whose answer was lost cannot be looked for now (the workspace's read-back budget is
    spent): it is neither posted again nor given up, but tried later."""


def api_error(exc: SlackApiError) -> str:
    return str(exc.response.get("error") or "unknown_error")


# Errors after which nothing more can be shown in the thread: the debate is stopped.
FATAL_ERRORS = frozenset(
    {
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "thread_not_found",
        "invalid_auth",
        "account_inactive",
        "token_revoked",
        "no_permission",
    }
)


def delivery_failed(error: str, count: int) -> str:
    what = "a message" if count == 1 else f"{count} messages or edits"
    return (
        f"⚠️ Slack refused {what} (`{error}`), so part of the debate is missing here; the debate goes"
        " on, and its transcript has the full text."
    )


def slack_down(exc: BaseException) -> bool:
    """A failure that says Slack itself is failing (a 5xx, no answer), not that it refused the op."""
    if isinstance(exc, SlackApiError):
        return int(exc.response.status_code) >= 500
    return isinstance(exc, (*NETWORK_ERRORS, ReadBackDeferred))
