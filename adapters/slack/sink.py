"""One debate's sink: events are queued (emit returns at once) and a worker renders and sends them
in order, pacing interim edits. The worker is the debate's error funnel on the Slack side."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.emoji import option_reactions
from adapters.slack.ops import Op, Update, Upload, vote_key
from adapters.slack.render import SlackView
from adapters.slack.sender import PersonaIdentity, SlackSender, api_error
from adapters.slack.settings import SlackSettings
from adapters.slack.throttle import EditThrottle
from adapters.slack.votes import HumanVotes
from core.events import DebateCompleted, Event, HumanVoteOpened, VotingStarted
from core.ports import Store
from core.session import DebateHandle

log = logging.getLogger(__name__)

# Errors after which nothing more can be shown in the thread: the debate is stopped.
FATAL_ERRORS = frozenset(
    {
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "thread_not_found",
        "invalid_auth",
        "account_inactive",
        "token_revoked",
        "no_permission",
    }
)
NETWORK_ERRORS = (SlackClientError, aiohttp.ClientError, TimeoutError)


class SlackSink:
    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        settings: SlackSettings,
        identity: PersonaIdentity,
        store: Store,
        bot_user_id: str | None,
    ) -> None:
        self.channel = channel
        self.thread_ts = thread_ts
        self._client = client
        self._store = store
        self._view = SlackView(streaming=settings.streaming, limit=settings.message_limit)
        self._sender = SlackSender(
            client,
            channel=channel,
            thread_ts=thread_ts,
            identity=identity,
            limit=settings.message_limit,
            remember=self._remember,
        )
        self._throttle = EditThrottle(settings.edit_interval, asyncio.get_running_loop().time)
        self._votes = HumanVotes(bot_user_id=bot_user_id)
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()  # None: the debate ended unannounced
        self._handle: DebateHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._gave_up = False

    @property
    def debate_id(self) -> str | None:
        return self._handle.debate_id if self._handle is not None else None

    @property
    def finished(self) -> bool:
        return self._task is not None and self._task.done()

    async def emit(self, event: Event) -> None:
        self._queue.put_nowait(event)

    async def stop(self, reason: str) -> None:
        """Ask the debate to end; it closes with its closing card."""
        if self._handle is not None and not self._handle.done:
            await self._handle.stop(reason)

    def attach(self, handle: DebateHandle, on_finished: Callable[[SlackSink], None]) -> None:
        """Start delivering once the debate has a handle (events queued before are kept)."""
        self._handle = handle
        self._votes.attach(handle)
        self._task = asyncio.create_task(self._run(), name=f"slack-sink-{handle.debate_id}")
        self._task.add_done_callback(lambda task: self._finished(task, on_finished))
        self._watch = asyncio.create_task(self._watch_end(handle), name=f"slack-sink-end-{handle.debate_id}")

    def shows_vote(self, ts: str) -> bool:
        return self._votes.vote_on(ts) is not None

    async def reaction(self, ts: str, user: str, name: str, *, added: bool) -> None:
        await self._votes.reaction(ts, user, name, added=added)

    async def delivered(self) -> None:
        """Wait until the debate's last event has been delivered."""
        if self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    async def aclose(self) -> None:
        for task in (self._watch, self._task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    # --- the worker -----------------------------------------------------------------------------

    def _finished(self, task: asyncio.Task[None], on_finished: Callable[[SlackSink], None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("debate %s: Slack delivery stopped", self.debate_id, exc_info=task.exception())
        if self._watch is not None:
            self._watch.cancel()
        on_finished(self)

    async def _watch_end(self, handle: DebateHandle) -> None:
        """A debate cut short without DebateCompleted (the bot shutting down) still ends delivery."""
        await handle.wait()
        self._queue.put_nowait(None)

    async def _run(self) -> None:
        while True:
            delay = self._throttle.delay()
            try:
                event = await asyncio.wait_for(self._queue.get(), delay)
            except TimeoutError:
                due = self._throttle.take_due()
                if due is not None:
                    await self._send(due)
                continue
            if event is None:
                break
            try:
                await self._deliver(event)
            except Exception:
                log.exception("debate %s: could not show %s #%d", self.debate_id, event.kind, event.seq)
            if isinstance(event, DebateCompleted):
                break
        for waiting in self._throttle.take_all():
            await self._send(waiting)

    async def _deliver(self, event: Event) -> None:
        for op in self._view.render(event):
            await self._apply(op)
        if isinstance(event, VotingStarted):
            ts = self._sender.ts_of.get(vote_key(event.vote_id))
            if ts is not None:
                self._votes.card_posted(event.vote_id, ts, option_reactions(event.options))
        elif isinstance(event, HumanVoteOpened):
            await self._count_reactions_on_card(event.vote_id)

    async def _apply(self, op: Op) -> None:
        if isinstance(op, Update) and op.interim:
            if not self._throttle.offer(op):
                return
        elif not isinstance(op, Upload):
            self._throttle.drop(op.key)
        await self._send(op)

    async def _send(self, op: Op) -> None:
        if self._gave_up:
            return
        try:
            await self._sender.apply(op)
        except SlackApiError as exc:
            error = api_error(exc)
            log.warning("debate %s: Slack refused %s (%s)", self.debate_id, type(op).__name__, error)
            if error in FATAL_ERRORS:
                await self._give_up(error)
        except NETWORK_ERRORS as exc:
            log.warning("debate %s: could not reach Slack for %s: %r", self.debate_id, type(op).__name__, exc)

    async def _give_up(self, error: str) -> None:
        """Nothing more can be shown in this thread: stop the debate (it is stored in full)."""
        self._gave_up = True
        await self.stop(f"Rostra can no longer post in this channel ({error})")

    async def _count_reactions_on_card(self, vote_id: str) -> None:
        ts = self._sender.ts_of.get(vote_key(vote_id))
        if ts is None:
            return
        try:
            response = await self._client.reactions_get(channel=self.channel, timestamp=ts, full=True)
        except NETWORK_ERRORS as exc:
            log.warning(
                "debate %s: could not read the reactions on vote %s: %r", self.debate_id, vote_id, exc
            )
            return
        on_card: dict[str, list[str]] = {}
        message: Any = response.get("message") or {}
        for reaction in message.get("reactions") or []:
            for user in reaction.get("users") or []:
                on_card.setdefault(str(user), []).append(str(reaction.get("name")))
        await self._votes.window_opened(vote_id, on_card)

    async def _remember(self, key: str, ts: str) -> None:
        """Keep each message's timestamp with the debate (a resumed debate needs them)."""
        if self.debate_id is None:
            return
        try:
            await self._store.set_binding_value(self.debate_id, f"ts:{key}", ts)
        except Exception:
            log.exception("debate %s: could not store the timestamp of %s", self.debate_id, key)
