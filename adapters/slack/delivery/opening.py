"""Posting a debate's opening card so that a lost answer does not leave it behind.

The card is the first thing a start posts: its thread is where the debate lives. When Slack's
answer to that post is lost (a dropped connection, a 5xx), Slack may or may not have posted it. The
card carries a marker in its metadata, as the sender's posts do (`markers.py`); the channel's
newest messages are read back for it, and a card that landed carries the debate. One that did not
is the caller's to report as Slack not answering (`ambiguous`), not as a channel without the bot.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.failures import NETWORK_ERRORS, ambiguous
from adapters.slack.delivery.markers import key_of, marked
from adapters.slack.delivery.rates import READ_BACK_MESSAGES, rates_of

log = logging.getLogger(__name__)


async def post_opening(client: AsyncWebClient, channel: str, text: str, blocks: tuple[Any, ...]) -> str:
    """The ts of the opening card posted in `channel`. Raises SlackApiError or a network error when
    it was not posted, or may not have been and the channel could not be read back."""
    key = f"opening:{uuid.uuid4().hex}"
    try:
        posted = await client.chat_postMessage(
            channel=channel,
            text=text,
            blocks=list(blocks),
            metadata=marked(key),
            parse="none",
            unfurl_links=False,
        )
        return str(posted["ts"])
    except (SlackApiError, *NETWORK_ERRORS) as exc:
        if not ambiguous(exc):
            raise
        landed = await _landed(client, channel, key)
        if landed is None:
            raise
        log.info("the opening card in %s had landed (%s) although Slack's answer was lost", channel, landed)
        return landed


async def _landed(client: AsyncWebClient, channel: str, key: str) -> str | None:
    """The ts of the message posted with `key` among the channel's newest, if Slack shows it."""
    if not rates_of(client)["conversations.history"].try_take(spare=0.0):
        log.warning("could not look for a lost opening card in %s: no read-back budget left now", channel)
        return None
    try:
        response = await client.conversations_history(
            channel=channel, limit=READ_BACK_MESSAGES, include_all_metadata=True
        )
    except (SlackApiError, *NETWORK_ERRORS) as exc:
        log.warning("could not look for a lost opening card in %s: %r", channel, exc)
        return None
    return next((str(m["ts"]) for m in response.get("messages") or [] if key_of(m) == key), None)
