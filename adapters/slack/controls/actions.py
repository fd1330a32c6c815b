"""The work behind `stop`, `status` and `transcript` (typed or clicked on the opening card): who
may stop a debate, what it is doing, its transcript attached in the channel.

Every answer comes from the store, so it is the same on whichever worker the request lands: the
channel's running debate is looked up there, its status is rebuilt from its stored log when another
worker runs it, a stop is left there for its owner (the reply says whether it has ended yet), and
a debate's transcript is attached once per window (`TRANSCRIPT_EVERY`) by whichever worker is
asked first (its key claimed in the store, as an inbound request's is: adapters/once.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import partial

from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.once import first_delivery
from adapters.slack.access import StopPolicy
from adapters.slack.controls.transcripts import PLATFORM, attach_transcript, find_record, thread_link
from adapters.slack.errors import PermissionCheckError
from adapters.slack.inbound.replies import Replies
from adapters.slack.inbound.requests import Request
from adapters.slack.render import messages
from adapters.slack.settings import SlackSettings
from adapters.stop_request import stop_running
from adapters.transcript_files import TRANSCRIPT_EVERY
from core.errors import StoreError, StoreUnavailable
from core.outlasting import STATUS_UNKNOWN
from core.ports import DebateRecord

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 2.0  # seconds for the permission check (user groups) before a stop is refused
STOP_REASON = "stopped by a member of the channel"


class Controls:
    def __init__(self, rt: Host, client: AsyncWebClient, settings: SlackSettings) -> None:
        self.rt, self.client = rt, client
        self._stoppers = StopPolicy(settings)

    async def running(self, channel: str) -> DebateRecord | None:
        """The debate running in the channel, whichever worker runs it."""
        return await self.rt.manager.find_running(platform=PLATFORM, channel=channel)

    async def status(self, request: Request, replies: Replies) -> None:
        try:
            record = await self.running(request.channel)
            view = await self.rt.manager.status_of(record.id) if record is not None else None
        except StoreUnavailable:
            await replies.say(STATUS_UNKNOWN)
            return
        except StoreError as exc:
            await replies.say(messages.refusal(str(exc)))
            return
        await replies.say(messages.status_text(view) if view is not None else messages.NOTHING_RUNNING)

    async def stop(self, request: Request, replies: Replies) -> None:
        """The channel's debate, stopped if this person may (`adapters/stop_request.py`)."""

        async def refusal(record: DebateRecord) -> str | None:
            starter, channel = record.binding.started_by, request.channel
            try:
                allows = self._stoppers.allows(self.client, request.user, starter=starter, channel=channel)
                allowed = await asyncio.wait_for(allows, CHECK_TIMEOUT)
            except PermissionCheckError as exc:
                return messages.refusal(str(exc))
            except TimeoutError:
                return messages.CHECK_TIMED_OUT
            if not allowed:
                return messages.STOP_NOT_PERMITTED
            log.info("debate %s: stop asked by %s", record.id, request.user)
            return None

        running = partial(self.running, request.channel)
        try:
            done = await stop_running(self.rt.manager, running, refusal, reason=STOP_REASON, tell=replies.say)
        except StoreError as exc:
            await replies.say(messages.refusal(str(exc)))
            return
        topic = done.record.topic if done.record is not None else ""
        said = {"stopped": messages.stopping, "requested": messages.stop_requested}.get(done.outcome)
        await replies.say(done.refusal or (said(topic) if said else messages.NOTHING_RUNNING))

    async def transcript(self, request: Request, debate_id: str | None, replies: Replies) -> None:
        record = await find_record(self.rt, team=request.team, channel=request.channel, debate_id=debate_id)
        if record is None:
            await replies.say(messages.no_transcript(debate_id))
            return
        window = f"slack:transcript:{record.id}"  # one file per debate a window, on every worker
        if not await first_delivery(self.rt.store, window, TRANSCRIPT_EVERY):  # point to the earlier one
            link = await thread_link(self.rt, self.client, record)
            minutes = round(TRANSCRIPT_EVERY / 60)
            await replies.say(messages.transcript_recent(record.id, record.topic, link, minutes))
            return
        await replies.confirm(messages.preparing_transcript(record.id))
        failed = await attach_transcript(self.rt, self.client, record)  # waits Slack out
        if failed is not None:
            with contextlib.suppress(StoreError):  # not attached: the next ask tries again
                await self.rt.store.forget_delivery(window)
            await replies.say(messages.transcript_failed(failed))
            return
        await replies.say(messages.transcript_attached(record.id, record.topic))
