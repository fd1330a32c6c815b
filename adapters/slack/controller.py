"""The Slack front end's logic: commands in (typed requests), core calls out; it owns the sinks.

A debate is bound to its channel (`Binding.channel` = the channel id): one debate per channel, and
it lives in the thread under the bot's opening card. `stop`, `status` and votes find it there.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import assert_never
from weakref import WeakValueDictionary

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack import messages
from adapters.slack.cards import pending_card
from adapters.slack.commands import (
    Help,
    Invalid,
    Personas,
    Start,
    Status,
    Stop,
    Transcript,
    parse_command,
)
from adapters.slack.errors import PermissionCheckError
from adapters.slack.inbound import ReactionRequest, Request
from adapters.slack.permissions import StarterPolicy
from adapters.slack.replies import Replies
from adapters.slack.sender import PersonaIdentity, api_error
from adapters.slack.sink import NETWORK_ERRORS, SlackSink
from adapters.slack.transcripts import PLATFORM, attach_transcript, find_record
from core.errors import AdmissionError, DebateError
from core.ports import Binding
from core.session import DebateHandle
from core.spec import DebateSpec

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 2.0  # seconds for the permission check (user groups) before a start is refused
LOCK_TIMEOUT = 2.0  # seconds to wait for another start in the same channel
STOP_REASON = "stopped by a member of the channel"


class SlackFrontEnd:
    def __init__(self, rt: Host, client: AsyncWebClient) -> None:
        self.rt = rt
        self.client = client
        self.settings = rt.config.slack
        self._policy = StarterPolicy(self.settings)
        self._sinks: dict[str, SlackSink] = {}  # channel → the sink of its current debate
        self._live: set[SlackSink] = set()
        self._identities: dict[str, PersonaIdentity] = {}
        self._locks: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()

    # --- requests -------------------------------------------------------------------------------

    async def handle(self, request: Request, replies: Replies, *, bot_user_id: str | None) -> None:
        command = parse_command(request.text, slash=request.slash)
        match command:
            case Start():
                await self._start(request, command, replies, bot_user_id)
            case Stop():
                await self._stop(request, replies)
            case Status():
                handle = self._running(request.channel)
                await replies.say(
                    messages.status_text(handle.status()) if handle else messages.NOTHING_RUNNING
                )
            case Transcript():
                await self._transcript(request, command.debate_id, replies)
            case Personas():
                await replies.say(messages.personas_text(self.rt.personas))
            case Help():
                await replies.say(messages.help_text(self.rt.manager.formats, command.unknown))
            case Invalid():
                await replies.say(messages.refusal(command.message))
            case _:
                assert_never(command)

    async def reaction(self, reaction: ReactionRequest, *, bot_user_id: str | None) -> None:
        if reaction.user == bot_user_id:
            return
        sink = self._sinks.get(reaction.channel)
        if sink is not None and sink.shows_vote(reaction.ts):
            await sink.reaction(reaction.ts, reaction.user, reaction.name, added=reaction.added)

    def _running(self, channel: str) -> DebateHandle | None:
        return self.rt.manager.find(platform=PLATFORM, channel=channel)

    async def _refusal_for(self, user: str) -> str | None:
        """Why `user` may not start (or stop others') debates, or None when they may."""
        try:
            allowed = await asyncio.wait_for(self._policy.allows(self.client, user), CHECK_TIMEOUT)
        except PermissionCheckError as exc:
            return messages.refusal(str(exc))
        except TimeoutError:
            return messages.CHECK_TIMED_OUT
        return None if allowed else messages.NOT_PERMITTED

    # --- start ----------------------------------------------------------------------------------

    async def _start(
        self, request: Request, command: Start, replies: Replies, bot_user_id: str | None
    ) -> None:
        spec = DebateSpec(topic=command.topic, options=dict(command.options))
        if command.format is not None:
            spec = replace(spec, format=command.format)
        try:
            spec = self.rt.prepare(spec).spec
        except DebateError as exc:
            await replies.say(messages.refusal(str(exc)))
            return
        refusal = await self._refusal_for(request.user)
        if refusal is not None:
            await replies.say(refusal)
            return
        lock = self._locks.get(request.channel)
        if lock is None:
            lock = self._locks[request.channel] = asyncio.Lock()
        try:
            await asyncio.wait_for(lock.acquire(), LOCK_TIMEOUT)
        except TimeoutError:
            await replies.say(messages.BUSY)
            return
        try:
            try:
                self.rt.admission.check(
                    platform=PLATFORM, scope=request.team, channel=request.channel, user=request.user
                )
            except AdmissionError as exc:
                await replies.say(messages.refusal(str(exc)))
                return
            await replies.confirm(messages.starting(spec.topic))
            await self._launch(request, spec, replies, bot_user_id)
        finally:
            lock.release()

    async def _launch(
        self, request: Request, spec: DebateSpec, replies: Replies, bot_user_id: str | None
    ) -> None:
        """Post the opening card (so the thread exists), then start the debate into it."""
        text, blocks = pending_card(spec.topic, spec.format)
        try:
            posted = await self.client.chat_postMessage(
                channel=request.channel, text=text, blocks=list(blocks), parse="none", unfurl_links=False
            )
        except SlackApiError as exc:
            await replies.say(messages.cannot_post(api_error(exc)))
            return
        except NETWORK_ERRORS as exc:
            await replies.say(messages.cannot_post(type(exc).__name__))
            return
        thread_ts = str(posted["ts"])
        sink = SlackSink(
            self.client,
            channel=request.channel,
            thread_ts=thread_ts,
            settings=self.settings,
            identity=self._identities.setdefault(request.team, PersonaIdentity()),
            store=self.rt.store,
            bot_user_id=bot_user_id,
        )
        binding = Binding(
            platform=PLATFORM, scope=request.team, channel=request.channel, started_by=request.user
        )
        try:
            handle = await self.rt.start_debate(spec, sink, binding=binding)
        except DebateError as exc:
            await self._withdraw_card(request.channel, thread_ts, str(exc))
            await replies.say(messages.could_not_start(str(exc)))
            return
        self.rt.admission.record_start(platform=PLATFORM, user=request.user)
        self._sinks[request.channel] = sink
        self._live.add(sink)
        sink.attach(handle, self._forget)
        await self._remember(
            handle.debate_id,
            {
                "team": request.team,
                "channel": request.channel,
                "thread_ts": thread_ts,
                "ts:opening": thread_ts,
            },
        )

    async def _withdraw_card(self, channel: str, ts: str, why: str) -> None:
        text = messages.could_not_start(why)
        try:
            await self.client.chat_update(channel=channel, ts=ts, text=text, blocks=[], parse="none")
        except NETWORK_ERRORS as exc:
            log.warning("could not withdraw the opening card in %s: %r", channel, exc)

    async def _remember(self, debate_id: str, values: dict[str, str]) -> None:
        try:
            for key, value in values.items():
                await self.rt.store.set_binding_value(debate_id, key, value)
        except Exception:
            log.exception("debate %s: could not store where it lives in Slack", debate_id)

    def _forget(self, sink: SlackSink) -> None:
        self._live.discard(sink)
        if self._sinks.get(sink.channel) is sink:
            del self._sinks[sink.channel]

    # --- stop, transcript -----------------------------------------------------------------------

    async def _stop(self, request: Request, replies: Replies) -> None:
        handle = self._running(request.channel)
        if handle is None:
            await replies.say(messages.NOTHING_RUNNING)
            return
        if handle.binding.started_by != request.user and await self._refusal_for(request.user) is not None:
            await replies.say(messages.STOP_NOT_PERMITTED)
            return
        log.info("debate %s: stop asked by %s", handle.debate_id, request.user)
        sink = self._sinks.get(request.channel)
        if sink is not None and sink.debate_id == handle.debate_id:
            await sink.stop(STOP_REASON)
        else:
            await handle.stop(STOP_REASON)
        await replies.say(messages.stopping(handle.spec.topic))

    async def _transcript(self, request: Request, debate_id: str | None, replies: Replies) -> None:
        record = await find_record(self.rt, team=request.team, channel=request.channel, debate_id=debate_id)
        if record is None:
            await replies.say(messages.no_transcript(debate_id))
            return
        await replies.confirm(messages.preparing_transcript(record.id))
        try:
            await attach_transcript(self.rt, self.client, record)
        except SlackApiError as exc:
            await replies.say(messages.transcript_failed(api_error(exc)))
            return
        except NETWORK_ERRORS as exc:
            await replies.say(messages.transcript_failed(type(exc).__name__))
            return
        await replies.say(messages.transcript_attached(record.id, record.topic))

    # --- lifecycle ------------------------------------------------------------------------------

    async def wait_idle(self) -> None:
        """Wait until no Slack debate runs and every sink has delivered its last event."""
        while True:
            running = [h for h in self.rt.manager.running() if h.binding.platform == PLATFORM]
            for handle in running:
                await handle.wait()
            live = [sink for sink in self._live if not sink.finished]
            for sink in live:
                await sink.delivered()
            if not running and not live:
                return

    async def aclose(self) -> None:
        """Stop delivering (the debates themselves belong to the runtime)."""
        sinks = list(self._live)
        self._live.clear()
        self._sinks.clear()
        for sink in sinks:
            await sink.aclose()
