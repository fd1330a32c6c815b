"""A debate asked for inside a thread runs under its own opening card (Slack threads do not nest);
the thread it was asked in gets a reply pointing to it."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.sink import NETWORK_ERRORS
from adapters.slack.inbound.home.blocks import thread_link
from adapters.slack.inbound.requests import Request
from adapters.slack.render.text import escape

log = logging.getLogger(__name__)


def pointer_text(topic: str, channel: str, card_ts: str) -> str:
    return f"🎙️ The debate on *{escape(topic)}* runs in <{thread_link(channel, card_ts)}|its own thread>."


async def point_back(client: AsyncWebClient, request: Request, topic: str, card_ts: str) -> None:
    """Reply in the thread the request came from (if it came from one) with a link to the debate."""
    if not request.thread_ts:
        return
    try:
        await client.chat_postMessage(
            channel=request.channel,
            thread_ts=request.thread_ts,
            text=pointer_text(topic, request.channel, card_ts),
            parse="none",
            unfurl_links=False,
        )
    except (SlackApiError, *NETWORK_ERRORS) as exc:
        log.warning("could not point the thread %s to its debate: %r", request.thread_ts, exc)
