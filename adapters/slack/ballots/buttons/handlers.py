"""Button ballots (`slack.ballot: buttons`): a click on a vote card's button is that person's vote.

One vote per person (a click on another option changes it; the core keeps the newest), a private
confirmation, live counts on the card (the core's VoteCast redraws it), no buttons once the window
closes. The click names its vote (`<vote id>|<option>`) and comes from a message in the debate's
thread, so it reaches the right debate, also after a restart.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from adapters.click_votes import ENDED, UNAVAILABLE, vote_elsewhere, vote_here
from adapters.host import Host
from adapters.slack.ballots.buttons.blocks import ACTION_PREFIX, read_value
from adapters.slack.ballots.remote import RemoteVotes
from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.inbound.once import first_delivery, trigger_key
from adapters.slack.inbound.replies import until_slack_answers
from adapters.slack.render.text import escape
from core.errors import StoreError
from core.outlasting import Waiting, vote_waits

log = logging.getLogger(__name__)


async def vote_by_button(
    rt: Host,
    *,
    channel: str,
    thread_ts: str | None,
    user: str,
    name: str,
    value: str,
    remote: RemoteVotes | None = None,
    waiting: Waiting | None = None,
) -> str:
    """Cast the click's vote; what to tell the person. `remote` passes on votes for debates another
    worker runs."""
    read = read_value(value)
    try:
        running = await rt.manager.find_running(platform=PLATFORM, channel=channel)
    except StoreError:
        return UNAVAILABLE
    handle = rt.manager.get(running.id) if running is not None else None  # None: not run here
    if handle is not None and handle.done:
        handle = None
    if read is None or running is None:
        return ENDED
    try:  # a card of this debate, not of an earlier one in the channel
        if (await rt.store.binding_values(running.id)).get("thread_ts") != thread_ts:
            return ENDED
    except StoreError:
        return UNAVAILABLE
    vote_id, key = read
    if handle is None and remote is not None:  # another worker runs it
        return await vote_elsewhere(
            remote, running.id, vote_id, user, key, name or None, waiting=waiting, escape=escape
        )
    if handle is None:
        return ENDED
    return await vote_here(handle, vote_id, user, key, name or None, escape)


def register_ballot_buttons(app: AsyncApp, rt: Host) -> None:
    remote = RemoteVotes(rt)

    async def on_click(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        if not await first_delivery(rt.store, trigger_key(body, "action")):
            return  # this click was handled already, here or on another worker
        container = body.get("container") or {}
        message = body.get("message") or {}
        channel = str(container.get("channel_id") or (body.get("channel") or {}).get("id") or "")
        user = body.get("user") or {}
        user_id = str(user.get("id") or "")

        async def say(text: str) -> None:  # waits Slack out, as every reply does
            await until_slack_answers(
                lambda: client.chat_postEphemeral(
                    channel=channel, user=user_id, text=text, thread_ts=message.get("thread_ts"), parse="none"
                ),
                what=f"a vote's answer to {user_id}",
            )

        async with Waiting(lambda: say(vote_waits(rt.manager.settings.storage))) as waiting:
            answer = await vote_by_button(
                rt,
                channel=channel,
                thread_ts=message.get("thread_ts"),
                user=user_id,
                name=str(user.get("name") or user.get("username") or ""),
                value=str(action.get("value") or ""),
                remote=remote,
                waiting=waiting,
            )
        await say(answer)  # after "it waits", if that was said

    app.action(re.compile("^" + re.escape(ACTION_PREFIX)))(on_click)
