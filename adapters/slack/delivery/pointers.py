"""A debate asked for inside a thread runs under its own opening card (Slack threads do not nest);
the thread it was asked in gets a reply pointing to it."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.failures import NETWORK_ERRORS
from adapters.slack.delivery.opening import InThread, post_marked
from adapters.slack.inbound.home.blocks import thread_link
from adapters.slack.inbound.replies import REPLY_WAIT
from adapters.slack.inbound.requests import Request
from adapters.slack.render.text import escape

log = logging.getLogger(__name__)


def pointer_text(topic: str, channel: str, card_ts: str) -> str:
    return f"🎙️ The debate on *{escape(topic)}* runs in <{thread_link(channel, card_ts)}|its own thread>."


async def point_back(client: AsyncWebClient, request: Request, topic: str, card_ts: str) -> None:
    """Reply in the thread the request came from (if it came from one) with a link to the debate,
    waiting Slack out as a reply to the person does (`REPLY_WAIT`). The link carries a marker, as
    the opening card does: one whose answer was lost is found in the thread (among its replies
    since the card) rather than posted twice."""
    if not request.thread_ts:
        return
    what = f"the link from the thread {request.thread_ts} to its debate"
    try:
        await post_marked(
            client,
            request.channel,
            pointer_text(topic, request.channel, card_ts),
            thread=InThread(request.thread_ts, after=card_ts),
            limits=REPLY_WAIT,
            what=what,
        )
    except (SlackApiError, *NETWORK_ERRORS) as exc:
        log.warning("could not send %s: %r", what, exc)
