"""Ephemeral replies to the person who asked: in the slash command's ack (or its response_url),
or with `chat.postEphemeral` after a mention."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

import aiohttp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.inbound.requests import Request

log = logging.getLogger(__name__)

# Slack wants a slash command answered within 3 s; past this, ack and answer through response_url.
ACK_DEADLINE = 2.5
WORKING = "⏳ Working on it…"


class Replies(Protocol):
    async def say(self, text: str) -> None:
        """Tell the person (only them)."""
        ...

    async def confirm(self, text: str) -> None:
        """Acknowledge a request that will show its result in the channel (slash commands only)."""
        ...


class MentionReplies:
    def __init__(self, client: AsyncWebClient, request: Request) -> None:
        self._client = client
        self._request = request

    async def say(self, text: str) -> None:
        r = self._request
        try:
            await self._client.chat_postEphemeral(
                channel=r.channel, user=r.user, text=text, thread_ts=r.thread_ts, parse="none"
            )
        except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("could not reply to %s in %s: %r", r.user, r.channel, exc)

    async def confirm(self, text: str) -> None:
        """A mention needs no acknowledgement: the opening card is the answer."""


class SlashReplies:
    """The first reply travels in the ack; later ones (or any after the deadline) via response_url."""

    def __init__(self, ack: AsyncAck, respond: AsyncRespond) -> None:
        self._ack = ack
        self._respond = respond
        self._acked = False
        self._watchdog = asyncio.create_task(self._ack_before_deadline())

    async def say(self, text: str) -> None:
        if await self._ack_with(text):
            return
        try:
            await self._respond(text=text, response_type="ephemeral")
        except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("could not answer a slash command: %r", exc)

    async def confirm(self, text: str) -> None:
        await self.say(text)

    async def close(self) -> None:
        """Cancel the deadline and make sure Slack got an ack."""
        self._watchdog.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._watchdog
        if not self._acked:
            self._acked = True
            await self._ack()

    async def _ack_with(self, text: str) -> bool:
        if self._acked:
            return False
        self._acked = True
        await self._ack(text=text, response_type="ephemeral")
        return True

    async def _ack_before_deadline(self) -> None:
        await asyncio.sleep(ACK_DEADLINE)
        await self._ack_with(WORKING)
