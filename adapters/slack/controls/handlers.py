"""Stop, Status and Transcript buttons on a debate's opening card.

The action ids are fixed (`rostra_card_stop`, …) and a click names the card it came from (channel
and message ts), which is the debate's thread: so the buttons work whatever process drew the card,
after any restart. Stop carries Slack's confirmation dialog. The work is the `stop`, `status` and
`transcript` commands (the same rule on who may stop, the same ephemeral answers), applied only when
the card's own debate is the one running in its channel.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.controls.blocks import STATUS_ACTION, STOP_ACTION, TRANSCRIPT_ACTION
from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.inbound.dispatch import SlackFrontEnd
from adapters.slack.inbound.once import first_delivery, trigger_key
from adapters.slack.inbound.replies import MentionReplies
from adapters.slack.inbound.requests import Request
from core.errors import StoreUnavailable
from core.outlasting import STATUS_UNKNOWN, TRY_AGAIN

log = logging.getLogger(__name__)

ENDED = "This debate has ended; the *Transcript* button on its card gives the whole of it."
UNKNOWN = "I can't find the debate of this card any more."
RECENT = 200


async def card_debate(rt: Host, *, team: str, channel: str, ts: str) -> tuple[str, bool] | None:
    """The id of the debate whose opening card is (channel, ts), and whether it is running."""
    running = await rt.manager.find_running(platform=PLATFORM, channel=channel)  # on any worker
    if running is not None:
        values = await rt.store.binding_values(running.id)
        if values.get("thread_ts") == ts:
            return running.id, True
    for record in await rt.store.list_debates(RECENT):
        b = record.binding
        if b.platform != PLATFORM or b.scope != team or b.channel != channel:
            continue
        if (await rt.store.binding_values(record.id)).get("thread_ts") == ts:
            return record.id, False
    return None


def register_card_buttons(app: AsyncApp, front: SlackFrontEnd) -> None:
    async def on_click(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        await ack()
        if not await first_delivery(front.rt.store, trigger_key(body, "action")):
            return  # this click was handled already, here or on another worker
        container = body.get("container") or {}
        channel = str(container.get("channel_id") or (body.get("channel") or {}).get("id") or "")
        ts = str(container.get("message_ts") or "")
        user = body.get("user") or {}
        team = str((body.get("team") or {}).get("id") or user.get("team_id") or context.team_id or "")
        kind = str(action.get("action_id") or "")
        request = Request(team=team, channel=channel, user=str(user.get("id") or ""), text="")
        replies = MentionReplies(client, request)
        try:
            found = await card_debate(front.rt, team=team, channel=channel, ts=ts)
        except StoreUnavailable:  # the database away: a Stop waits for it; Status, Transcript say so
            if kind != STOP_ACTION:
                await replies.say(STATUS_UNKNOWN if kind == STATUS_ACTION else TRY_AGAIN)
                return
            found = ("", True)  # the stop finds the channel's debate itself
        if found is None:
            await replies.say(UNKNOWN)
            return
        debate_id, running = found
        if kind == TRANSCRIPT_ACTION:
            text = f"transcript {debate_id}"
        elif not running:
            await replies.say(ENDED)
            return
        else:
            text = "stop" if kind == STOP_ACTION else "status"
        request = Request(team=team, channel=channel, user=request.user, text=text)
        await front.handle(request, MentionReplies(client, request), bot_user_id=context.bot_user_id)

    for action_id in (STOP_ACTION, STATUS_ACTION, TRANSCRIPT_ACTION):
        app.action(action_id)(on_click)
