"""The Start modal's Bolt listeners: open it (`/debate` alone, the App Home button, the message
shortcut), redraw it when the format changes, and start the debate when it is submitted, through the
same start path as `/debate <topic>`. What the request gets wrong is shown inline in the modal."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.delivery.failures import NETWORK_ERRORS, ambiguous
from adapters.slack.inbound.commands import Start
from adapters.slack.inbound.dispatch import SlackFrontEnd
from adapters.slack.inbound.documents import AttachmentError
from adapters.slack.inbound.home.blocks import HOME_START_ACTION
from adapters.slack.inbound.modal.blocks import (
    CALLBACK_ID,
    CHANNEL_BLOCK,
    FORMAT_ACTION,
    TOPIC_BLOCK,
    FormError,
    Origin,
    chosen_format,
    error_block,
    read_state,
    read_submission,
    start_modal,
)
from adapters.slack.inbound.replies import until_slack_answers
from adapters.slack.inbound.requests import Request
from adapters.slack.install.scopes import SLASH_COMMAND
from adapters.slack.render.text import from_slack
from core.errors import DebateError, StoreError
from core.ports import DebateRecord
from core.spec import DebateSpec

log = logging.getLogger(__name__)

SHORTCUT_CALLBACK = "rostra_debate_message"
NO_CHANNEL = "Pick the channel the debate should run in."
EMPTY_TOPIC = "Give the motion to debate."
EXPIRED_TRIGGER = "The Start form could not open in time (Slack allows three seconds); try again."


def channel_busy(topic: str) -> str:
    return f"A debate is already running in that channel ({topic[:200]!r}); stop it or pick another."


STORE_CHECK_TIMEOUT = 0.5  # seconds to ask the store whether the channel is busy (Slack wants the ack in 3)


class ModalReplies:
    """Tell the person who submitted the modal: ephemerally in the channel, else in the app's DM."""

    def __init__(self, client: AsyncWebClient, request: Request) -> None:
        self._client = client
        self._request = request

    async def say(self, text: str) -> None:
        r = self._request
        refused = await until_slack_answers(  # waits Slack out, as every reply does
            lambda: self._client.chat_postEphemeral(channel=r.channel, user=r.user, text=text, parse="none"),
            what=f"a reply to {r.user} in {r.channel}",
        )
        if refused is None or ambiguous(refused):
            return
        log.info("could not answer %s in %s; writing in the app's DM instead", r.user, r.channel)
        await until_slack_answers(
            lambda: self._client.chat_postMessage(channel=r.user, text=text, parse="none"),
            what=f"a reply to {r.user} in the app's DM",
        )

    async def confirm(self, text: str) -> None:
        await self.say(text)


def _view_for(front: SlackFrontEnd, origin: Origin, fmt: str, topic: str = "") -> dict[str, Any]:
    core = front.rt.core
    defaults = {
        name: getattr(core.formats, name).model_dump()
        for name in front.rt.manager.formats
        if hasattr(core.formats, name)
    }
    if front.settings.human_window:  # Slack's own default window (adapters/slack/ballots/windows.py)
        for values in defaults.values():
            values["human_window"] = front.settings.human_window
    return start_modal(
        front.rt.manager.formats,
        origin=origin,
        fmt=fmt,
        topic=topic,
        defaults=defaults,
        document_chars=core.formats.panel.max_document_chars,
    )


async def open_modal(
    client: AsyncWebClient,
    front: SlackFrontEnd,
    trigger_id: str,
    origin: Origin,
    topic: str = "",
    *,
    user: str = "",
) -> None:
    """Open the Start modal; when Slack refuses the trigger (too late, or used already), tell `user`
    privately in the channel instead of doing nothing."""
    try:
        await client.views_open(
            trigger_id=trigger_id, view=_view_for(front, origin, DebateSpec().format, topic)
        )
    except SlackApiError as exc:
        error = exc.response.get("error")
        log.warning("could not open the Start modal: %s", error)
        if error in TRIGGER_ERRORS and user and origin.channel:
            await _say_privately(client, origin.channel, user, EXPIRED_TRIGGER)
    except NETWORK_ERRORS as exc:
        log.warning("could not open the Start modal: %r", exc)


TRIGGER_ERRORS = {"expired_trigger_id", "invalid_trigger_id", "exchanged_trigger_id"}


async def _running_in(front: SlackFrontEnd, channel: str) -> DebateRecord | None:
    """The debate running in `channel`, whichever worker runs it (asked of the store, so every worker
    answers the same). None too when the store is slow or away: the start's admission says it then."""
    try:
        return await asyncio.wait_for(front.rt.store.find_running(PLATFORM, channel), STORE_CHECK_TIMEOUT)
    except (StoreError, TimeoutError) as exc:
        log.info("could not ask the store whether %s is busy (the start will): %r", channel, exc)
        return None


async def _say_privately(client: AsyncWebClient, channel: str, user: str, text: str) -> None:
    try:
        await client.chat_postEphemeral(channel=channel, user=user, text=text, parse="none")
    except NETWORK_ERRORS as exc:
        log.info("could not tell %s in %s that the form did not open: %r", user, channel, exc)


def register_modal(app: AsyncApp, front: SlackFrontEnd) -> None:
    """Register before the `/debate` listener: this one takes `/debate` with no text."""

    async def command_is_empty(body: dict[str, Any]) -> bool:
        return not str(body.get("text") or "").strip()

    async def on_empty_command(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        origin = Origin(channel=str(body.get("channel_id") or "") or None, source="command")
        user = str(body.get("user_id") or "")
        await open_modal(client, front, str(body.get("trigger_id") or ""), origin, user=user)

    async def on_message_shortcut(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        message = body.get("message") or {}
        channel = (body.get("channel") or {}).get("id")
        topic = " ".join(from_slack(str(message.get("text") or "")).split())
        limit = front.rt.core.limits.max_topic_length
        topic = topic[:limit]
        origin = Origin(channel=str(channel) if channel else None, source="shortcut")
        user = str((body.get("user") or {}).get("id") or "")
        await open_modal(client, front, str(body.get("trigger_id") or ""), origin, topic, user=user)

    async def on_home_start(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        await open_modal(client, front, str(body.get("trigger_id") or ""), Origin(source="home"))

    async def on_format_changed(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        view = body.get("view") or {}
        origin = Origin.from_metadata(str(view.get("private_metadata") or ""))
        fmt = chosen_format(view, DebateSpec().format)
        try:
            await client.views_update(
                view_id=view.get("id"), hash=view.get("hash"), view=_view_for(front, origin, fmt)
            )
        except SlackApiError as exc:  # hash_conflict: the person changed it again meanwhile
            log.info("Start modal not redrawn: %s", exc.response.get("error"))
        except NETWORK_ERRORS as exc:
            log.warning("could not redraw the Start modal: %r", exc)

    async def on_submit(
        ack: AsyncAck,
        body: dict[str, Any],
        view: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        try:
            submission = read_submission(view, DebateSpec().format)
        except FormError as exc:
            await ack(response_action="errors", errors={exc.block_id: str(exc)})
            return
        if not submission.topic:
            await ack(response_action="errors", errors={TOPIC_BLOCK: EMPTY_TOPIC})
            return
        if submission.channel is None:
            await ack(response_action="errors", errors={CHANNEL_BLOCK: NO_CHANNEL})
            return
        user = str((body.get("user") or {}).get("id") or "")
        team = str((body.get("team") or {}).get("id") or view.get("team_id") or context.team_id or "")
        request = Request(
            team=team, channel=submission.channel, user=user, text=submission.topic, files=submission.files
        )
        command = Start(topic=submission.topic, format=submission.format, options=submission.options)
        try:
            front.check(request, command)
        except (DebateError, AttachmentError) as exc:
            await ack(response_action="errors", errors={error_block(str(exc), view): str(exc)[:2000]})
            return
        running = await _running_in(front, submission.channel)
        if running is not None:  # said in the modal, before it closes
            block = CHANNEL_BLOCK if CHANNEL_BLOCK in read_state(view) else TOPIC_BLOCK
            await ack(response_action="errors", errors={block: channel_busy(running.topic)})
            return
        refusal = await front.refusal_for(request)  # bounded by launch's check timeout
        if refusal is not None:
            await ack(response_action="errors", errors={TOPIC_BLOCK: refusal[:2000]})
            return
        await ack()
        await front.start(request, command, ModalReplies(client, request), bot_user_id=context.bot_user_id)

    app.command(SLASH_COMMAND, matchers=[command_is_empty])(on_empty_command)
    app.shortcut(SHORTCUT_CALLBACK)(on_message_shortcut)
    app.action(HOME_START_ACTION)(on_home_start)
    app.action(FORMAT_ACTION)(on_format_changed)
    app.view(CALLBACK_ID)(on_submit)
