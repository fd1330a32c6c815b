"""The Slack front end's logic: commands in (typed requests), core calls out; it owns the sinks.

A debate is bound to its channel (`Binding.channel` = the channel id): one debate per channel, and
it lives in the thread under the bot's opening card. `stop`, `status` and votes find it there.
Where it lives (team, channel, thread, each message's timestamp) is stored with the debate, so that
after a restart `resume` picks every running debate up again in its own thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace
from typing import assert_never
from weakref import WeakValueDictionary

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.access import StarterPolicy, StopPolicy
from adapters.slack.ballots.remote import RemoteVotes
from adapters.slack.ballots.windows import with_platform_window
from adapters.slack.controls.transcripts import PLATFORM, attach_transcript, find_record
from adapters.slack.delivery.pointers import point_back
from adapters.slack.delivery.sender import PersonaIdentity, api_error
from adapters.slack.delivery.sink import FATAL_ERRORS, NETWORK_ERRORS, SlackSink
from adapters.slack.errors import PermissionCheckError
from adapters.slack.inbound.commands import (
    Help,
    Invalid,
    Personas,
    Start,
    Status,
    Stop,
    Transcript,
    parse_command,
)
from adapters.slack.inbound.documents import (
    QUESTION_OPTION,
    AttachmentError,
    Attachments,
    DocumentFetcher,
    check_file,
    placeholder,
    sort_files,
)
from adapters.slack.inbound.replies import Replies
from adapters.slack.inbound.requests import ReactionRequest, Request
from adapters.slack.render import messages
from adapters.slack.render.cards import pending_card
from adapters.slack.results import SlackResults
from core.admission import Slot
from core.clock import Clock, RealClock
from core.errors import AdmissionError, DebateError
from core.ports import Binding, DebateRecord
from core.session import DebateHandle
from core.spec import DebateSpec

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 2.0  # seconds for the permission check (user groups) before a start is refused
LOCK_TIMEOUT = 2.0  # seconds to wait for another start in the same channel
RESUME_WAIT = 30.0  # seconds a start waits for the debates being resumed after a restart
STOP_REASON = "stopped by a member of the channel"


class SlackFrontEnd:
    def __init__(self, rt: Host, client: AsyncWebClient) -> None:
        self.rt = rt
        self.client = client
        self.settings = rt.config.slack
        self._policy = StarterPolicy(self.settings)
        self._stoppers = StopPolicy(self.settings)
        self._sinks: dict[str, SlackSink] = {}  # channel → the sink of its current debate
        self._live: set[SlackSink] = set()
        self._identities: dict[str, PersonaIdentity] = {}
        self._locks: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()
        self._fetcher = DocumentFetcher(client, api_url=self.settings.api_url)
        self._resuming: asyncio.Event | None = None  # set once resumed debates are back in place
        self.countdown_clock: Clock = RealClock()  # vote cards count down in people's time, not debate time
        self.results = SlackResults(rt, client)  # each debate's result to its channel at the end
        self.remote_votes = RemoteVotes(rt)  # votes on debates another worker runs

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
                await replies.say(
                    messages.help_text(
                        self.rt.manager.formats,
                        command.unknown,
                        document_chars=self.rt.core.formats.panel.max_document_chars,
                    )
                )
            case Invalid():
                await replies.say(messages.refusal(command.message))
            case _:
                assert_never(command)

    async def reaction(self, reaction: ReactionRequest, *, bot_user_id: str | None) -> None:
        if reaction.user == bot_user_id or self.settings.ballot == "buttons":  # buttons: clicks vote
            return
        sink = self._sinks.get(reaction.channel)
        if sink is not None and sink.shows_vote(reaction.ts):
            await sink.reaction(reaction.ts, reaction.user, reaction.name, added=reaction.added)
        elif sink is None:  # perhaps a card of a debate another worker runs (remote_votes.py)
            await self.remote_votes.reaction(
                reaction.channel, reaction.ts, reaction.user, reaction.name, added=reaction.added, name=None
            )

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

    async def start(
        self, request: Request, command: Start, replies: Replies, *, bot_user_id: str | None
    ) -> None:
        """Start a debate from a request already read (the Start modal uses this: the same path)."""
        await self._start(request, command, replies, bot_user_id)

    async def refusal_for(self, request: Request) -> str | None:
        """Why the person may not start debates, or None (the Start modal says it inline)."""
        return await self._refusal_for(request.user)

    def check(self, request: Request, command: Start) -> None:
        """Raise DebateError or AttachmentError when the request would be refused (nothing is fetched)."""
        self._checked(request, command)

    async def _start(
        self, request: Request, command: Start, replies: Replies, bot_user_id: str | None
    ) -> None:
        try:
            spec, attachments = self._checked(request, command)
        except (DebateError, AttachmentError) as exc:
            hint = messages.SLASH_CARRIES_NO_FILES if request.slash and self._takes_documents(command) else ""
            await replies.say(messages.refusal(str(exc)) + hint)
            return
        refusal = await self._refusal_for(request.user)
        if refusal is not None:
            await replies.say(refusal)
            return
        if self._resuming is not None:  # a debate resuming in this channel must be found first
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._resuming.wait(), RESUME_WAIT)
        lock = self._locks.get(request.channel)
        if lock is None:
            lock = self._locks[request.channel] = asyncio.Lock()
        try:
            await asyncio.wait_for(lock.acquire(), LOCK_TIMEOUT)
        except TimeoutError:
            await replies.say(messages.BUSY)
            return
        try:
            try:  # reserved with no await since the check: simultaneous starts cannot all pass
                slot = self.rt.admission.reserve(
                    platform=PLATFORM, scope=request.team, channel=request.channel, user=request.user
                )
            except AdmissionError as exc:
                await replies.say(messages.refusal(str(exc)))
                return
            with slot:  # released (cooldown given back) unless the debate starts
                if attachments:
                    try:
                        spec = await self._read_documents(spec, attachments)
                    except (DebateError, AttachmentError) as exc:
                        await replies.say(messages.refusal(str(exc)))
                        return
                await replies.confirm(messages.starting(spec.topic))
                await self._launch(request, spec, replies, bot_user_id, slot)
        finally:
            lock.release()

    def _takes_documents(self, command: Start, field: str = "documents") -> bool:
        format_cls = self.rt.manager.formats.get((command.format or DebateSpec().format).strip().lower())
        return format_cls is not None and field in format_cls.Options.model_fields

    def _checked(self, request: Request, command: Start) -> tuple[DebateSpec, Attachments]:
        """The request checked in full, each attached file standing in for its document, so that
        nothing is downloaded for a request that would fail. Raises DebateError or AttachmentError."""
        options = with_platform_window(  # Slack's longer default window (adapters/slack/ballots/windows.py)
            command.options,
            takes_window=self._takes_documents(command, "human_window"),
            seconds=self.settings.human_window,
        )
        question_file = options.pop(QUESTION_OPTION, None)
        spec = DebateSpec(topic=command.topic, options=options)
        if command.format is not None:
            spec = replace(spec, format=command.format)
        attachments = sort_files(
            request.files,
            question_file=None if question_file is None else str(question_file),
            fmt=spec.format,
            takes_documents=self._takes_documents(command),
            takes_questions=self._takes_documents(command, "question_document"),
        )
        limit = self.rt.core.formats.panel.max_document_chars
        for file in attachments.files:
            if not file.needs_info:  # else checked once Slack has said more (files.info)
                check_file(file, limit=limit)
        return self.rt.prepare(_with_documents(spec, attachments)).spec, attachments

    async def _read_documents(self, spec: DebateSpec, attachments: Attachments) -> DebateSpec:
        """Download the attached documents and check the request again with them."""
        limit = self.rt.core.formats.panel.max_document_chars
        documents, question = await self._fetcher.fetch_all(attachments, limit=limit)
        log.info("read %d attached documents", len(documents) + (question is not None))
        options = dict(spec.options)
        if documents:
            options["documents"] = documents
        if question is not None:
            options["question_document"] = question
        return self.rt.prepare(replace(spec, options=options)).spec

    async def _launch(
        self, request: Request, spec: DebateSpec, replies: Replies, bot_user_id: str | None, slot: Slot
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
            clock=self.countdown_clock,
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
        slot.started()
        self._sinks[request.channel] = sink
        self._live.add(sink)
        sink.attach(handle, self._forget)
        self.results.follow(handle, sink)
        await point_back(self.client, request, spec.topic, thread_ts)  # asked in a thread: link it
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
        try:
            allowed = await asyncio.wait_for(
                self._stoppers.allows(
                    self.client, request.user, starter=handle.binding.started_by, channel=request.channel
                ),
                CHECK_TIMEOUT,
            )
        except PermissionCheckError as exc:
            await replies.say(messages.refusal(str(exc)))
            return
        except TimeoutError:
            await replies.say(messages.CHECK_TIMED_OUT)
            return
        if not allowed:
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

    # --- after a restart ------------------------------------------------------------------------

    async def resume(self) -> list[DebateHandle]:
        """Pick up every Slack debate a restart cut short, each in its own thread; their handles."""
        resuming = self._resuming = asyncio.Event()
        try:
            return await self._resume()
        finally:
            resuming.set()

    async def _resume(self) -> list[DebateHandle]:
        bot_user_id = await self._bot_user_id()
        reattached: dict[str, SlackSink] = {}

        async def attach(record: DebateRecord, values: dict[str, str]) -> SlackSink | None:
            sink = await self._reattach(record, values, bot_user_id)
            if sink is not None:
                reattached[record.id] = sink
            return sink

        async def adopted(handles: list[DebateHandle]) -> None:  # taken over from a stopped worker
            self._bind(handles, reattached)

        handles = await self.rt.resume_debates(PLATFORM, attach, adopted=adopted)
        self._bind(handles, reattached)
        if handles:
            log.info("resumed %d Slack debate(s)", len(handles))
        return handles

    def _bind(self, handles: list[DebateHandle], reattached: dict[str, SlackSink]) -> None:
        """Each reattached sink to its resumed debate (its delivery and votes start here)."""
        running = {h.debate_id: h for h in handles}
        for debate_id, sink in list(reattached.items()):
            del reattached[debate_id]
            handle = running.get(debate_id)
            if handle is not None:
                sink.attach(handle, self._forget)
                self.results.follow(handle, sink)
            else:  # closed instead of resumed: its thread still gets the notice and the closing card
                sink.close_out(self._forget)

    async def _reattach(
        self, record: DebateRecord, values: dict[str, str], bot_user_id: str | None
    ) -> SlackSink | None:
        """A sink for the debate's existing thread, or None when that thread is gone."""
        channel = values.get("channel") or record.binding.channel
        thread_ts = values.get("thread_ts")
        if not channel or not thread_ts:
            log.warning("debate %s: where it was shown in Slack is unknown; it cannot resume", record.id)
            return None
        try:  # is the thread still there for Rostra? (reading its opening card's reactions says so)
            await self.client.reactions_get(channel=channel, timestamp=thread_ts)
        except SlackApiError as exc:
            if api_error(exc) in FATAL_ERRORS:
                log.warning("debate %s: its channel is gone (%s)", record.id, api_error(exc))
                return None
        except NETWORK_ERRORS as exc:  # Slack unreachable for now: deliveries will retry and tell
            log.warning("debate %s: could not check its thread: %r", record.id, exc)
        sink = SlackSink(
            self.client,
            channel=channel,
            thread_ts=thread_ts,
            settings=self.settings,
            identity=self._identities.setdefault(record.binding.scope, PersonaIdentity()),
            store=self.rt.store,
            bot_user_id=bot_user_id,
            debate_id=record.id,
            clock=self.countdown_clock,
        )
        sink.restore(await self.rt.store.events(record.id), values)
        self._sinks[channel] = sink
        self._live.add(sink)
        return sink

    async def _bot_user_id(self) -> str | None:
        """Rostra's own user id (its reactions on vote cards never count)."""
        try:
            response = await self.client.auth_test()
        except (SlackApiError, *NETWORK_ERRORS) as exc:
            log.warning("could not ask Slack who Rostra is: %r", exc)
            return None
        user = response.get("user_id")
        return str(user) if user else None

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
            await self.results.wait()
            if not running and not live:
                return

    async def aclose(self) -> None:
        """Stop delivering (the debates themselves belong to the runtime)."""
        await self.results.aclose()
        sinks = list(self._live)
        self._live.clear()
        self._sinks.clear()
        for sink in sinks:
            await sink.aclose()


def _with_documents(spec: DebateSpec, attachments: Attachments) -> DebateSpec:
    """The request with a stand-in for each attached document (see `placeholder`)."""
    if not attachments:
        return spec
    options = dict(spec.options)
    if attachments.documents:
        options["documents"] = [placeholder(f) for f in attachments.documents]
    if attachments.questions is not None:
        options["question_document"] = placeholder(attachments.questions)
    return replace(spec, options=options)
