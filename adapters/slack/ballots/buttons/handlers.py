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

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.ballots.buttons.blocks import ACTION_PREFIX, read_value
from adapters.slack.ballots.remote import RemoteVotes
from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.inbound.once import first_delivery, trigger_key
from adapters.slack.render.text import escape
from core.errors import BallotClosedError, BallotError, StoreError
from core.outlasting import Waiting, vote_waits
from core.session import DebateHandle

log = logging.getLogger(__name__)

CLOSED = "Voting on this card has closed."
ENDED = "This debate has ended."
UNAVAILABLE = "Your vote could not be passed on just now; try again in a moment."
SLACK_ERRORS = (SlackClientError, aiohttp.ClientError, TimeoutError)


def _label(handle: DebateHandle, vote_id: str, key: str) -> str:
    ballot = handle.state.ballots.get(vote_id)
    options = ballot.options if ballot is not None else ()
    option = next((o for o in options if o.key == key), None)
    return f"{option.emoji} {escape(option.label)}" if option is not None else escape(key)


async def vote_elsewhere(
    remote: RemoteVotes,
    *,
    channel: str,
    thread_ts: str | None,
    user: str,
    name: str,
    read: tuple[str, str],
    waiting: Waiting | None = None,
) -> str:
    """A click on a card of a debate another worker runs: the vote goes to it through the store
    (with the database away, it waits for it: `waiting` says so once). The buttons are on the card
    only while its window is open, so the click is taken as a vote."""
    vote_id, key = read
    try:
        debate_id = await remote.cards.running_in(channel)
        values = await remote.rt.store.binding_values(debate_id) if debate_id is not None else {}
        if debate_id is None or values.get("thread_ts") != thread_ts:
            return ENDED  # no debate runs here now, or this is a card of an earlier one
        if not await remote.cast(debate_id, vote_id, user, key, name or None, waiting):
            return ENDED
        options = await remote.cards.options(debate_id, vote_id) or ()
    except StoreError:
        return UNAVAILABLE
    option = next((o for o in options if o.key == key), None)
    shown = f"{option.emoji} {escape(option.label)}" if option is not None else escape(key)
    return f"You voted {shown}."


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
    if read is not None and handle is None and remote is not None:  # another worker runs it
        return await vote_elsewhere(
            remote, channel=channel, thread_ts=thread_ts, user=user, name=name, read=read, waiting=waiting
        )
    if read is None or handle is None:
        return ENDED
    if (await rt.store.binding_values(handle.debate_id)).get("thread_ts") != thread_ts:
        return ENDED  # a card of an earlier debate in this channel
    vote_id, key = read
    ballot = handle.state.ballots.get(vote_id)
    before = ballot.human_votes.get(user) if ballot is not None else None
    if before is not None and before.choice == key and handle.human_vote_open(vote_id):
        return f"You already voted {_label(handle, vote_id, key)}."
    try:
        await handle.cast_human_vote(vote_id, user, key, voter_name=name or None)
    except BallotClosedError:
        return CLOSED
    except BallotError as exc:
        return escape(str(exc))
    if before is not None:
        return f"You changed your vote to {_label(handle, vote_id, key)}."
    return f"You voted {_label(handle, vote_id, key)}."


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

        async def say(text: str) -> None:
            try:
                await client.chat_postEphemeral(
                    channel=channel, user=user_id, text=text, thread_ts=message.get("thread_ts"), parse="none"
                )
            except SLACK_ERRORS as exc:
                log.warning("could not confirm a vote to %s: %r", user_id, exc)

        answer = await vote_by_button(
            rt,
            channel=channel,
            thread_ts=message.get("thread_ts"),
            user=user_id,
            name=str(user.get("name") or user.get("username") or ""),
            value=str(action.get("value") or ""),
            remote=remote,
            waiting=Waiting(lambda: say(vote_waits(rt.manager.settings.storage))),
        )
        await say(answer)

    app.action(re.compile("^" + re.escape(ACTION_PREFIX)))(on_click)
