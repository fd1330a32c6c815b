"""A debate asked for inside a thread runs under its own opening card (Slack threads do not nest);
the thread it was asked in gets a reply pointing to it."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.inbound.home.blocks import thread_link
from adapters.slack.inbound.replies import until_slack_answers
from adapters.slack.inbound.requests import Request
from adapters.slack.render.text import escape


def pointer_text(topic: str, channel: str, card_ts: str) -> str:
    return f"🎙️ The debate on *{escape(topic)}* runs in <{thread_link(channel, card_ts)}|its own thread>."


async def point_back(client: AsyncWebClient, request: Request, topic: str, card_ts: str) -> None:
    """Reply in the thread the request came from (if it came from one) with a link to the debate,
    waiting Slack out as a reply to the person does (`until_slack_answers`): a try Slack failed
    may have landed, so at worst the link is there twice."""
    if not request.thread_ts:
        return
    await until_slack_answers(
        lambda: client.chat_postMessage(
            channel=request.channel,
            thread_ts=request.thread_ts,
            text=pointer_text(topic, request.channel, card_ts),
            parse="none",
            unfurl_links=False,
        ),
        what=f"the link from the thread {request.thread_ts} to its debate",
    )
