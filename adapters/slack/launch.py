"""Starting a debate from Slack: the request checked in full, who may start, one start at a time per
channel, admission, the attached documents read, then the opening card (so the thread exists) and
the debate started into its thread.

A debate is bound to its channel (`Binding.channel` = the channel id): one debate per channel, and
it lives in the thread under the bot's opening card. Where it lives (team, channel, thread, each
message's timestamp) is stored with the debate, so that after a restart it is picked up again there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, replace
from weakref import WeakValueDictionary

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.access import StarterPolicy
from adapters.slack.ballots.windows import with_platform_window
from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.delivery.desk import SlackDesk
from adapters.slack.delivery.failures import ambiguous, api_error
from adapters.slack.delivery.opening import post_marked
from adapters.slack.delivery.pointers import point_back
from adapters.slack.delivery.sink import NETWORK_ERRORS, SlackSink
from adapters.slack.errors import PermissionCheckError
from adapters.slack.inbound.commands import Start
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
from adapters.slack.inbound.requests import Request
from adapters.slack.render import messages
from adapters.slack.render.cards import pending_card
from adapters.slack.results import SlackResults
from adapters.slack.settings import SlackSettings
from core.admission import Claim
from core.clock import Clock, RealClock
from core.errors import DebateError
from core.outlasting import why_not_started
from core.ports import Binding
from core.spec import DebateSpec

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 2.0  # seconds for the permission check (user groups) before a start is refused
LOCK_TIMEOUT = 2.0  # seconds to wait for another start in the same channel
RESUME_WAIT = 30.0  # seconds a start waits for the debates being resumed after a restart


@dataclass(frozen=True)
class Launched:
    card_ts: str  # the opening card: its thread holds the debate


@dataclass(frozen=True)
class Refusal:
    text: str  # what the person who asked is told


class Launcher:
    def __init__(
        self,
        rt: Host,
        client: AsyncWebClient,
        settings: SlackSettings,
        desk: SlackDesk,
        results: SlackResults,
    ) -> None:
        self.rt, self.client, self.settings, self.desk, self.results = rt, client, settings, desk, results
        self._policy = StarterPolicy(settings)
        self._locks: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()
        self._fetcher = DocumentFetcher(client, api_url=settings.api_url)
        self.resuming: asyncio.Event | None = None  # set once resumed debates are back in place
        self.countdown_clock: Clock = RealClock()  # vote cards count down in people's time, not debate time

    async def refusal_for(self, user: str) -> str | None:
        """Why `user` may not start (or stop others') debates, or None when they may."""
        try:
            allowed = await asyncio.wait_for(self._policy.allows(self.client, user), CHECK_TIMEOUT)
        except PermissionCheckError as exc:
            return messages.refusal(str(exc))
        except TimeoutError:
            return messages.CHECK_TIMED_OUT
        return None if allowed else messages.NOT_PERMITTED

    async def start(
        self, request: Request, command: Start, replies: Replies, bot_user_id: str | None
    ) -> None:
        try:
            spec, attachments = self.checked(request, command)
        except (DebateError, AttachmentError) as exc:
            hint = messages.SLASH_CARRIES_NO_FILES if request.slash and self._takes_documents(command) else ""
            await replies.say(messages.refusal(str(exc)) + hint)
            return
        refusal = await self.refusal_for(request.user)
        if refusal is not None:
            await replies.say(refusal)
            return
        if self.resuming is not None:  # a debate resuming in this channel must be found first
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.resuming.wait(), RESUME_WAIT)
        lock = self._locks.get(request.channel)
        if lock is None:
            lock = self._locks[request.channel] = asyncio.Lock()
        try:
            await asyncio.wait_for(lock.acquire(), LOCK_TIMEOUT)
        except TimeoutError:
            await replies.say(messages.BUSY)
            return
        try:
            outcome = await self._admit_and_launch(request, spec, attachments, bot_user_id)
        finally:
            lock.release()
        # said with the channel free again (or its debate running), however long Slack takes
        if isinstance(outcome, Refusal):
            await replies.say(outcome.text)
            return
        await point_back(self.client, request, spec.topic, outcome.card_ts)  # asked in a thread: link it
        await replies.confirm(messages.starting(spec.topic))

    async def _admit_and_launch(
        self, request: Request, spec: DebateSpec, attachments: Attachments, bot_user_id: str | None
    ) -> Launched | Refusal:
        """Claim the channel, read the documents and launch: where the debate runs, or why not. The
        caller answers the person once the channel's lock is let go, so an answer waiting for Slack
        to take it keeps no other start in the channel waiting (or told it is busy)."""
        try:  # claimed in the store: every worker counts the same starts, one claim per channel
            claim = await self.rt.admission.admit(
                platform=PLATFORM, scope=request.team, channel=request.channel, user=request.user
            )
        except DebateError as exc:  # AdmissionError, or the store could not answer
            return Refusal(messages.refusal(why_not_started(exc)))
        async with claim:  # released (cooldown given back) unless the debate starts
            if attachments:
                try:
                    spec = await self._read_documents(spec, attachments)
                except (DebateError, AttachmentError) as exc:
                    return Refusal(messages.refusal(str(exc)))
            return await self._launch(request, spec, bot_user_id, claim)

    def _takes_documents(self, command: Start, field: str = "documents") -> bool:
        format_cls = self.rt.manager.formats.get((command.format or DebateSpec().format).strip().lower())
        return format_cls is not None and field in format_cls.Options.model_fields

    def checked(self, request: Request, command: Start) -> tuple[DebateSpec, Attachments]:
        """The request checked in full, each attached file standing in for its document, so that
        nothing is downloaded for a request that would fail. Raises DebateError or AttachmentError."""
        options = with_platform_window(  # Slack's longer default window (ballots/windows.py)
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
        return self.rt.manager.prepare(_with_documents(spec, attachments)).spec, attachments

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
        return self.rt.manager.prepare(replace(spec, options=options)).spec

    async def _launch(
        self, request: Request, spec: DebateSpec, bot_user_id: str | None, claim: Claim
    ) -> Launched | Refusal:
        """Post the opening card (so the thread exists), then start the debate into it: where it
        runs, or why it did not start."""
        text, blocks = pending_card(spec.topic, spec.format)
        try:
            thread_ts = await post_marked(self.client, request.channel, text, blocks)
        except SlackApiError as exc:
            said = messages.no_answer if ambiguous(exc) else messages.cannot_post
            return Refusal(said(api_error(exc)))
        except NETWORK_ERRORS as exc:
            return Refusal(messages.no_answer(type(exc).__name__))
        sink = SlackSink(
            self.client,
            channel=request.channel,
            thread_ts=thread_ts,
            settings=self.settings,
            identity=self.desk.identity(request.team),
            store=self.rt.store,
            bot_user_id=bot_user_id,
            clock=self.countdown_clock,
            pictures=self.rt.config.results.picture,
        )
        binding = Binding(
            platform=PLATFORM, scope=request.team, channel=request.channel, started_by=request.user
        )
        # where it lives, stored with the debate itself: a restart or another worker finds its thread
        values = {
            "team": request.team,
            "channel": request.channel,
            "thread_ts": thread_ts,
            "ts:opening": thread_ts,
        }
        try:
            handle = await self.rt.manager.start(spec, sink, binding=binding, claim=claim.key, values=values)
        except DebateError as exc:
            await self._withdraw_card(request.channel, thread_ts, why_not_started(exc))
            return Refusal(messages.could_not_start(why_not_started(exc)))
        claim.started()
        self.desk.track(sink)
        sink.attach(handle, self.desk.forget)
        self.results.follow(handle, sink)
        return Launched(card_ts=thread_ts)

    async def _withdraw_card(self, channel: str, ts: str, why: str) -> None:
        text = messages.could_not_start(why)
        try:
            await self.client.chat_update(channel=channel, ts=ts, text=text, blocks=[], parse="none")
        except NETWORK_ERRORS as exc:
            log.warning("could not withdraw the opening card in %s: %r", channel, exc)


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
