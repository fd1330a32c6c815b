"""Ephemeral replies to the person who asked: in the slash command's ack (or its response_url),
or with `chat.postEphemeral` after a mention.

A reply Slack does not take (a 5xx or no answer, after slack_sdk's own retries) is tried again with
backoff for up to two minutes (`REPLY_WAIT`), as a start's opening card is: the person who asked
while Slack was failing is told once it is back, not left with nothing. A reply whose failed try
did land is shown twice at worst (an ephemeral message has no marker to look for).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook import WebhookResponse

from adapters.delivery.outage import OutageLimits
from adapters.slack.delivery.failures import NETWORK_ERRORS, ReadBackDeferred, slack_down
from adapters.slack.inbound.requests import Request

log = logging.getLogger(__name__)

# Slack wants a slash command answered within 3 s; past this, ack and answer through response_url.
ACK_DEADLINE = 2.5
WORKING = "⏳ Working on it…"
REPLY_WAIT = OutageLimits(limit=120.0, first_probe=2.0, longest_probe=15.0)
"""How long a reply waits for Slack to take it: the person who asked is still there after a minute."""


class NotTaken(Exception):
    """A response_url answered 5xx (the webhook client returns it rather than raising)."""


async def until_slack_answers(send: Callable[[], Awaitable[object]], *, what: str) -> Exception | None:
    """`send()`, tried again while Slack does not answer it (or cannot say yet whether an upload
    whose answer was lost went through: ReadBackDeferred), for up to `REPLY_WAIT.limit` seconds.
    None once Slack took it; else the refusal, or Slack's last failure, logged (a reply is never
    worth more than that)."""
    limits = REPLY_WAIT
    give_up = time.monotonic() + limits.limit
    probe = limits.first_probe
    while True:
        try:
            await send()
            return None
        except (*NETWORK_ERRORS, NotTaken, ReadBackDeferred) as exc:
            if not (isinstance(exc, NotTaken) or slack_down(exc)) or time.monotonic() + probe > give_up:
                log.warning("could not send %s: %r", what, exc)
                return exc
            log.warning("Slack did not take %s (%r); trying again in %.0f s", what, exc, probe)
        await asyncio.sleep(probe)
        probe = min(probe * 2, limits.longest_probe)


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
        await until_slack_answers(
            lambda: self._client.chat_postEphemeral(
                channel=r.channel, user=r.user, text=text, thread_ts=r.thread_ts, parse="none"
            ),
            what=f"a reply to {r.user} in {r.channel}",
        )

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
        await until_slack_answers(lambda: self._follow_up(text), what="a slash command's answer")

    async def _follow_up(self, text: str) -> None:
        response: WebhookResponse = await self._respond(text=text, response_type="ephemeral")
        if response.status_code >= 500:
            raise NotTaken(f"HTTP {response.status_code}")
        if response.status_code != 200:  # the response_url expired, say: nothing to try again
            log.warning("a slash command's answer was refused (HTTP %s)", response.status_code)

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
