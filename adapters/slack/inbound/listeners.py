"""Bolt listeners: the only code that sees Bolt's injected arguments; each hands a typed request on."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.inbound.dispatch import SlackFrontEnd
from adapters.slack.inbound.once import event_key, first_delivery, trigger_key
from adapters.slack.inbound.replies import MentionReplies, SlashReplies
from adapters.slack.inbound.requests import mention_request, reaction_request, slash_request
from adapters.slack.install.scopes import SLASH_COMMAND

REPLAY_WINDOW = 330.0
"""Seconds a slash command's trigger id is remembered: Slack's signature check accepts a request
for five minutes, so within them a captured request could be sent again."""


class RecentIds:
    """Ids seen lately: Slack redelivers an event it thinks was not acknowledged, and a captured
    request can be replayed while its signature is still accepted. Remembered for `window` seconds
    (and at most `size` of them)."""

    def __init__(
        self, size: int = 10_000, window: float = REPLAY_WINDOW, now: Callable[[], float] = time.monotonic
    ) -> None:
        self._size = size
        self._window = window
        self._now = now
        self._ids: OrderedDict[str, float] = OrderedDict()

    def repeat(self, some_id: str | None) -> bool:
        if not some_id:
            return False
        now = self._now()
        while self._ids and next(iter(self._ids.values())) < now - self._window:
            self._ids.popitem(last=False)
        if some_id in self._ids:
            return True
        self._ids[some_id] = now
        if len(self._ids) > self._size:
            self._ids.popitem(last=False)
        return False


def register(app: AsyncApp, front: SlackFrontEnd) -> None:
    seen = RecentIds()
    triggers = RecentIds()

    async def on_mention(
        body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        if seen.repeat(body.get("event_id")) or not await first_delivery(front.rt.store, event_key(body)):
            return
        request = mention_request(body, event, context.bot_user_id)
        # Bolt's client carries the token of the workspace the mention came from
        await front.handle(request, MentionReplies(client, request), bot_user_id=context.bot_user_id)

    async def on_command(
        ack: AsyncAck, respond: AsyncRespond, command: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        if triggers.repeat(command.get("trigger_id")) or not await first_delivery(  # the same request
            front.rt.store,
            trigger_key(command),  # again, here or on another worker: do nothing twice
        ):
            await ack()
            return
        replies = SlashReplies(ack, respond)
        try:
            await front.handle(slash_request(command), replies, bot_user_id=context.bot_user_id)
        finally:
            await replies.close()

    async def on_reaction(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext) -> None:
        if seen.repeat(body.get("event_id")) or not await first_delivery(front.rt.store, event_key(body)):
            return
        added = event.get("type") == "reaction_added"
        reaction = reaction_request(event, added=added, team=str(body.get("team_id") or ""))
        if reaction is None:
            return
        await front.reaction(reaction, bot_user_id=context.bot_user_id)

    app.event("app_mention")(on_mention)
    app.command(SLASH_COMMAND)(on_command)
    app.event("reaction_added")(on_reaction)
    app.event("reaction_removed")(on_reaction)
