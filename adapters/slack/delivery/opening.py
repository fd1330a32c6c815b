"""Posting a debate's opening card so that a lost answer does not leave it behind, nor two cards
(and, the same way, the link back to it from the thread it was asked in: `pointers.py`).

The card is the first thing a start posts: its thread is where the debate lives. When Slack's
answer to that post is lost (a dropped connection, a 5xx), Slack may or may not have posted it. The
card carries a marker in its metadata, as the sender's posts do (`markers.py`); the channel's
newest messages (a thread's, for a reply) are read back for it, and a card that landed carries the
debate. While Slack does not answer, the start waits it out with backoff (`OPENING_WAIT`) rather
than failing the person who asked at Slack's first 500: the card is posted again only once a
read-back shows it did not land, so at most one lands. One still not posted at the end is the
caller's to report as Slack not answering (`ambiguous`), not as a channel without the bot.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.delivery.outage import OutageLimits
from adapters.slack.delivery.failures import NETWORK_ERRORS, ambiguous
from adapters.slack.delivery.markers import key_of, marked
from adapters.slack.delivery.rates import READ_BACK_MESSAGES, rates_of

log = logging.getLogger(__name__)

OPENING_WAIT = OutageLimits(limit=120.0, first_probe=2.0, longest_probe=15.0)
"""How long a start waits for Slack to answer its opening card: a person who asked is still there
after a minute or two of Slack failing, not after the ten minutes a running debate waits."""


@dataclass(frozen=True)
class InThread:
    """Where a reply goes: the thread's first message, and a message it is posted after (its
    read-back looks only at the thread's replies since then)."""

    ts: str
    after: str


async def post_marked(
    client: AsyncWebClient,
    channel: str,
    text: str,
    blocks: tuple[Any, ...] = (),
    *,
    thread: InThread | None = None,
    limits: OutageLimits | None = None,
    what: str = "the opening card",
) -> str:
    """The ts of the message posted in `channel` (in `thread`, if given). Raises SlackApiError or a
    network error when Slack refused it, or did not post it (or may not have, and could not be read
    back) within `limits.limit` seconds of the first try (default: `OPENING_WAIT`)."""
    limits = limits or OPENING_WAIT
    key = f"{'opening' if thread is None else 'reply'}:{uuid.uuid4().hex}"
    where = channel if thread is None else f"{channel} (thread {thread.ts})"
    give_up = time.monotonic() + limits.limit
    probe = limits.first_probe
    post = True  # False while it is unknown whether the last post landed
    while True:
        if post:
            try:
                posted = await client.chat_postMessage(
                    channel=channel,
                    thread_ts=None if thread is None else thread.ts,
                    text=text,
                    blocks=list(blocks) or None,
                    metadata=marked(key),
                    parse="none",
                    unfurl_links=False,
                )
                return str(posted["ts"])
            except (SlackApiError, *NETWORK_ERRORS) as exc:
                if not ambiguous(exc):
                    raise
                failure = exc
        landed, looked = await _landed(client, channel, thread, key, what=what)
        if landed is not None:
            log.info("%s in %s had landed (%s) though Slack's answer was lost", what, where, landed)
            return landed
        post = looked  # not among the newest: posting again makes one, not two
        if time.monotonic() + probe > give_up:
            raise failure
        log.warning("Slack is not answering %s in %s; trying again in %.0f s", what, where, probe)
        await asyncio.sleep(probe)
        probe = min(probe * 2, limits.longest_probe)


async def _landed(
    client: AsyncWebClient, channel: str, thread: InThread | None, key: str, *, what: str
) -> tuple[str | None, bool]:
    """(the ts of the message posted with `key` among the channel's newest, or the thread's since
    `thread.after`, whether Slack showed them): (None, False) when it could not be looked for now."""
    method = "conversations.history" if thread is None else "conversations.replies"
    if not rates_of(client)[method].try_take(spare=0.0):
        log.warning("could not look for %s in %s: no read-back budget left now", what, channel)
        return None, False
    try:
        if thread is None:
            response = await client.conversations_history(
                channel=channel, limit=READ_BACK_MESSAGES, include_all_metadata=True
            )
        else:
            response = await client.conversations_replies(
                channel=channel,
                ts=thread.ts,
                oldest=thread.after,
                limit=READ_BACK_MESSAGES,
                include_all_metadata=True,
            )
    except (SlackApiError, *NETWORK_ERRORS) as exc:
        log.warning("could not look for %s in %s: %r", what, channel, exc)
        return None, False
    found = (str(m["ts"]) for m in response.get("messages") or [] if key_of(m) == key)
    return next(found, None), True
