"""Bolt listeners: the only code that sees Bolt's injected arguments; each hands a typed request on."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.controller import SlackFrontEnd
from adapters.slack.inbound import mention_request, reaction_request, slash_request
from adapters.slack.replies import MentionReplies, SlashReplies
from adapters.slack.scopes import SLASH_COMMAND


class RecentIds:
    """Event ids seen lately: Slack redelivers an event it thinks was not acknowledged."""

    def __init__(self, size: int = 1000) -> None:
        self._size = size
        self._ids: OrderedDict[str, None] = OrderedDict()

    def repeat(self, event_id: str | None) -> bool:
        if not event_id:
            return False
        if event_id in self._ids:
            return True
        self._ids[event_id] = None
        if len(self._ids) > self._size:
            self._ids.popitem(last=False)
        return False


def register(app: AsyncApp, front: SlackFrontEnd) -> None:
    seen = RecentIds()

    async def on_mention(
        body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        if seen.repeat(body.get("event_id")):
            return
        request = mention_request(body, event, context.bot_user_id)
        # Bolt's client carries the token of the workspace the mention came from
        await front.handle(request, MentionReplies(client, request), bot_user_id=context.bot_user_id)

    async def on_command(
        ack: AsyncAck, respond: AsyncRespond, command: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        replies = SlashReplies(ack, respond)
        try:
            await front.handle(slash_request(command), replies, bot_user_id=context.bot_user_id)
        finally:
            await replies.close()

    async def on_reaction_added(event: dict[str, Any], context: AsyncBoltContext) -> None:
        reaction = reaction_request(event, added=True)
        if reaction is not None:
            await front.reaction(reaction, bot_user_id=context.bot_user_id)

    async def on_reaction_removed(event: dict[str, Any], context: AsyncBoltContext) -> None:
        reaction = reaction_request(event, added=False)
        if reaction is not None:
            await front.reaction(reaction, bot_user_id=context.bot_user_id)

    app.event("app_mention")(on_mention)
    app.command(SLASH_COMMAND)(on_command)
    app.event("reaction_added")(on_reaction_added)
    app.event("reaction_removed")(on_reaction_removed)
