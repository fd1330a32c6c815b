"""Slack's answers that decide a debate's delivery: the errors after which nothing more can be shown
in a thread, and the failures that mean Slack itself is down."""

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


def ambiguous(exc: BaseException) -> bool:
    """A failure after which Slack may or may not have carried the call out (a 5xx, no answer)."""
    if isinstance(exc, SlackApiError):
        return int(exc.response.status_code) >= 500
    return isinstance(exc, NETWORK_ERRORS)


def slack_down(exc: BaseException) -> bool:
    """A failure that says Slack itself is failing (a 5xx, no answer; a lost post it cannot look
    for now), not that it refused the op."""
    return ambiguous(exc) or isinstance(exc, ReadBackDeferred)
