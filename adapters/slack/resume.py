"""Picking Slack debates up again after a restart, each in its own thread.

Where a debate lives (team, channel, thread, each message's timestamp) was stored with it; its
sink is rebuilt from that and from its events, then bound to the debate once the runtime resumes
it, or left to post the closing notice when the debate is closed instead.
"""

from __future__ import annotations

import logging
from typing import Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.resuming import Reattachments
from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.delivery.desk import SlackDesk
from adapters.slack.delivery.failures import api_error
from adapters.slack.delivery.sink import FATAL_ERRORS, NETWORK_ERRORS, SlackSink
from adapters.slack.results import SlackResults
from adapters.slack.settings import SlackSettings
from core.clock import Clock
from core.ports import DebateRecord
from core.session import DebateHandle

log = logging.getLogger(__name__)


class Resumable(Protocol):
    """A front end whose debates resume: one workspace's, or one routing to each workspace's."""

    rt: Host
    results: SlackResults

    async def reattach(
        self, record: DebateRecord, values: dict[str, str], bot_user_id: str | None
    ) -> SlackSink | None: ...

    def forget(self, sink: SlackSink) -> None: ...

    async def bot_user_id(self) -> str | None: ...


async def resume_debates(front: Resumable) -> list[DebateHandle]:
    """Pick up every Slack debate a restart cut short, each in its own thread; their handles."""
    bot_user_id = await front.bot_user_id()

    async def reattach(record: DebateRecord, values: dict[str, str]) -> SlackSink | None:
        return await front.reattach(record, values, bot_user_id)

    async def bind(handle: DebateHandle, sink: SlackSink) -> None:  # its delivery and votes start here
        sink.attach(handle, front.forget)
        front.results.follow(handle, sink)

    async def close(sink: SlackSink) -> None:  # its thread still gets the notice and the closing card
        sink.close_out(front.forget)

    threads = Reattachments(reattach, lambda sink: sink, bind=bind, close=close)
    handles = await threads.resume(front.rt.recovery, PLATFORM)
    if handles:
        log.info("resumed %d Slack debate(s)", len(handles))
    return handles


async def reattach_thread(
    rt: Host,
    client: AsyncWebClient,
    settings: SlackSettings,
    desk: SlackDesk,
    clock: Clock,
    record: DebateRecord,
    values: dict[str, str],
    bot_user_id: str | None,
) -> SlackSink | None:
    """A sink for the debate's existing thread, or None when that thread is gone."""
    channel = values.get("channel") or record.binding.channel
    thread_ts = values.get("thread_ts")
    if not channel or not thread_ts:
        log.warning("debate %s: where it was shown in Slack is unknown; it cannot resume", record.id)
        return None
    try:  # is the thread still there for Rostra? (reading its opening card's reactions says so)
        await client.reactions_get(channel=channel, timestamp=thread_ts)
    except SlackApiError as exc:
        if api_error(exc) in FATAL_ERRORS:
            log.warning("debate %s: its channel is gone (%s)", record.id, api_error(exc))
            return None
    except NETWORK_ERRORS as exc:  # Slack unreachable for now: deliveries will retry and tell
        log.warning("debate %s: could not check its thread: %r", record.id, exc)
    sink = SlackSink(
        client,
        channel=channel,
        thread_ts=thread_ts,
        settings=settings,
        identity=desk.identity(record.binding.scope),
        store=rt.store,
        bot_user_id=bot_user_id,
        debate_id=record.id,
        clock=clock,
        pictures=rt.config.results.picture,
    )
    sink.restore(await rt.store.events(record.id), values)
    desk.track(sink)
    return sink


async def ask_bot_user_id(client: AsyncWebClient) -> str | None:
    """Rostra's own user id (its reactions on vote cards never count)."""
    try:
        response = await client.auth_test()
    except (SlackApiError, *NETWORK_ERRORS) as exc:
        log.warning("could not ask Slack who Rostra is: %r", exc)
        return None
    user = response.get("user_id")
    return str(user) if user else None
