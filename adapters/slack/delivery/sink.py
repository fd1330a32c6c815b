"""One debate's sink: events are queued (emit returns at once) in the debate's ordered delivery queue
(adapters/delivery/queue.py, shared with Discord), whose one worker hands each to `_deliver_item` in
order and sends the interim edits the pacing held back when they fall due. The worker is the
debate's error funnel on the Slack side.

After a restart a sink is rebuilt for the debate's existing thread (`restore`): the stored events the
thread had already been shown are rendered again without sending anything, so the view knows what
each message shows, and the stored timestamps say which message is which. Stored events the thread
never got (the bot stopped with them still queued) are delivered first, then the debate's new events.
Delivery is idempotent per message: a message that was posted is edited, never posted again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.card_votes import CardVotes
from adapters.delivery.closing_picture import drawn_while
from adapters.delivery.openings import shown_together
from adapters.delivery.outage import OutageLimits, PlatformOutage, ShownElsewhere
from adapters.delivery.queue import DeliveryQueue
from adapters.delivery.thread_sink import ThreadSink, cancelling
from adapters.metering import record_delivery
from adapters.slack.ballots.countdown import Countdowns
from adapters.slack.ballots.reactions import LAST_LOOK_WAIT, HumanVotes, read_card
from adapters.slack.delivery.failures import FATAL_ERRORS as FATAL_ERRORS  # used beside the sink
from adapters.slack.delivery.failures import NETWORK_ERRORS as NETWORK_ERRORS  # used beside the sink
from adapters.slack.delivery.failures import ReadBackDeferred, api_error, slack_down
from adapters.slack.delivery.items import Countdown, Item, Queued, Resumed, describe, yields_to_opening
from adapters.slack.delivery.rates import rates_of
from adapters.slack.delivery.sender import PersonaIdentity, SlackSender
from adapters.slack.delivery.throttle import EditThrottle
from adapters.slack.render.emoji import option_reactions
from adapters.slack.render.events import SlackView
from adapters.slack.render.ops import Op, Update, Upload, merged, vote_key
from adapters.slack.render.picture import picture_upload
from adapters.slack.settings import SlackSettings
from core.clock import Clock, RealClock
from core.events import (
    DebateCompleted,
    Event,
    HumanVoteOpened,
    TurnDelta,
    VotingClosed,
    VotingStarted,
)
from core.observe import platforms
from core.ports import Store
from core.session import DebateHandle

log = logging.getLogger(__name__)

DELIVERED = "delivered"  # binding key: the seq of the last event the thread was fully shown


class SlackSink(ThreadSink):
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
        debate_id: str | None = None,
        clock: Clock | None = None,
        pictures: bool = True,
        outage: OutageLimits | None = None,
    ) -> None:
        super().__init__(store, PlatformOutage("Slack", outage), debate_id)
        self._pictures = pictures  # the results picture follows the closing card (config results.picture)
        self.channel = channel
        self.thread_ts = thread_ts
        self._client = client
        self._view = SlackView(
            streaming=settings.streaming,
            limit=settings.message_limit,
            buttons=settings.ballot == "buttons",  # button ballots (ballots/buttons/handlers.py)
        )
        self._sender = SlackSender(
            client,
            channel=channel,
            thread_ts=thread_ts,
            identity=identity,
            limit=settings.message_limit,
            remember=self._remember,
            fence=self._still_ours,
        )
        self._throttle = EditThrottle(settings.edit_interval, asyncio.get_running_loop().time)
        self._rates = rates_of(client)
        self._bot_user_id = bot_user_id
        self._votes = HumanVotes(bot_user_id=bot_user_id)
        self._on_finished: Callable[[SlackSink], None] | None = None
        self._queue: DeliveryQueue[Item, Update] = DeliveryQueue(
            deliver=self._deliver_item,
            send=self._send,
            pacing=self._throttle,
            name=lambda: f"Slack debate {self.debate_id}",
            on_demand=False,
            is_last=lambda item: isinstance(item, Queued) and isinstance(item.event, DebateCompleted),
            describe=describe,
            on_stopped=self._finished,
            event_of=lambda item: item.event if isinstance(item, Queued) else None,  # openings are urgent
            yields=yields_to_opening,  # a window opening goes ahead of AI-vote card edits: its clock waits
            fence=self._still_ours,  # taken over by another process: nothing more from here
        )
        self._watch: asyncio.Task[None] | None = None
        self._gave_up = False
        self._started: dict[str, VotingStarted] = {}  # vote cards by vote id
        self._countdowns = Countdowns(  # "about … left" on open vote cards, in people's time
            clock or RealClock(), lambda vote_id, now: self._queue.put(Countdown(vote_id, now))
        )

    @property
    def finished(self) -> bool:
        return self._queue.finished

    async def emit(self, event: Event) -> None:
        self._queue.put(Queued(event))

    def restore(self, events: Sequence[Event], values: Mapping[str, str]) -> None:
        """Pick up a thread after a restart (call before any new event arrives).

        `events` is the debate's stored log and `values` its stored binding values. Events up to the
        last one the thread was fully shown rebuild the view and the open vote cards without sending
        anything; the later ones are queued to be delivered first.
        """
        self._sender.restore(values)
        shown = self._delivered_before(values, DELIVERED)
        for event in events:
            if event.seq > shown:
                self._queue.put(Queued(event, live=False))
                continue
            for op in self._view.render(event):
                self._sender.assume(op)
            if isinstance(event, VotingStarted):
                self._card_posted(event)
                if vote_key(event.vote_id) in self._sender.ts_of:
                    self._card_reports.shown_before(event.vote_id)
                    key = vote_key(event.vote_id)
                    self._sender.seeded[key] = set(option_reactions(event.options).values())
        self._queue.put(Resumed())

    def attach(self, handle: DebateHandle, on_finished: Callable[[SlackSink], None]) -> None:
        """Start delivering once the debate has a handle (events queued before are kept)."""
        self._bind(handle)
        self._votes.attach(handle)
        self._start(on_finished)
        self._watch = asyncio.create_task(self._watch_end(handle), name=f"slack-sink-end-{handle.debate_id}")

    def close_out(self, on_finished: Callable[[SlackSink], None]) -> None:
        """A debate that will not run again (it was closed on resume): deliver what is queued, then end."""
        self._start(on_finished)
        self._queue.end()

    def _start(self, on_finished: Callable[[SlackSink], None]) -> None:
        self._on_finished = on_finished
        self._queue.start()

    def _card_votes(self, vote_id: str) -> CardVotes | None:
        return self._votes.card(vote_id)

    def shows_vote(self, ts: str) -> bool:
        return self._votes.vote_on(ts) is not None

    async def reaction(self, ts: str, user: str, name: str, *, added: bool, at: float | None) -> None:
        await self._votes.reaction(ts, user, name, added=added, at=at)

    async def read_cards_again(self) -> None:
        """Reaction events may have been missed (Socket Mode reconnected): the cards of open windows
        are read again and counted as they stand (button votes are clicks, answered or refused)."""
        if not (self._view.buttons or self.finished):
            await self._votes.open_cards_read_again(self._read_card)

    async def read_card_at_close(self, vote_id: str) -> None:
        """A window closes: its card is read once more and counted as it stands. Slack sends events
        it could not deliver only a minute or more later (HTTP mode has no connection to watch)."""
        if not (self._view.buttons or self.finished):
            await self._votes.card_read_again(vote_id, self._read_card, within=LAST_LOOK_WAIT)

    async def _read_card(self, ts: str) -> dict[str, list[str]] | None:
        what = f"debate {self.debate_id}"
        return await read_card(self._client, self.channel, ts, what=what, bot_user_id=self._bot_user_id)

    async def delivered(self) -> None:
        """Wait until the debate's last event has been delivered."""
        await self._queue.idle()

    async def aclose(self) -> None:
        await self._countdowns.stop_all()
        if self._watch is not None and not self._watch.done():
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        await self._queue.aclose()

    # --- the worker -----------------------------------------------------------------------------

    def _finished(self) -> None:
        self._countdowns.cancel_all()  # nothing is delivered any more (the worker's end awaited the rest)
        if self._watch is not None:
            self._watch.cancel()
        if self._on_finished is not None:
            self._on_finished(self)

    async def _watch_end(self, handle: DebateHandle) -> None:
        """A debate cut short without DebateCompleted (the bot shutting down) still ends delivery."""
        await handle.wait()
        self._queue.end()

    async def _deliver_item(self, item: Item) -> None:
        """Show one queued item (the queue's worker calls it, in order). An event whose delivery
        failed counts as shown too (the queue logs the failure): it is not sent again after a restart."""
        if isinstance(item, Resumed):
            await self._apply(self._view.resumed())
            return
        if isinstance(item, Countdown):
            op = self._view.countdown(item.vote_id, item.now)
            if op is not None and item.vote_id in self._countdowns:
                await self._apply(op)
            return
        event = item.event
        events = [
            queued.event
            for queued in shown_together(self._queue.pull, cast(Item, item), _event_of(item.live))
            if isinstance(queued, Queued)
        ]
        try:
            if isinstance(event, TurnDelta) and self._outage.catching_up:
                self._view.render(event)  # owed after an outage: the turn's final text replaces it
            else:
                await self._show_events(events, live=item.live)
        finally:
            if not isinstance(event, TurnDelta) and not cancelling():
                await self._shown_up_to(max(e.seq for e in events), DELIVERED)

    async def _show_events(self, events: list[Event], *, live: bool) -> None:
        """Events one post or edit shows together (a card with its window's opening, the AI votes
        the opening overtook: adapters/delivery/openings.py), then what follows each."""
        first = events[0]
        if isinstance(first, VotingClosed):
            await self._countdowns.stop(first.vote_id)  # the closed card replaces the countdown
        elif isinstance(first, DebateCompleted):
            await self._countdowns.stop_all()
        rendered = [(event, list(self._view.render(event))) for event in events]
        if isinstance(first, DebateCompleted):
            await self._closing(first, rendered[0][1], live=live)
            return
        for op in merged([op for _, ops in rendered for op in ops]):
            await self._apply(op)
        for event, ops in rendered:
            await self._after(event, ops, live=live)

    async def _after(self, event: Event, ops: list[Op], *, live: bool) -> None:
        """What follows an event's ops: its ballot, its countdown, the report of its window."""
        if live:
            record_delivery("slack", event)  # delivery lag metric (adapters.metering)
        if isinstance(event, VotingStarted):
            self._started[event.vote_id] = event
            self._card_posted(event)
        elif isinstance(event, HumanVoteOpened) and event.vote_id in self._started:
            self._card_posted(self._started[event.vote_id])  # a card whose first post failed is up now
        if isinstance(event, HumanVoteOpened) and live:
            await self._countdowns.start(event, name=f"slack-countdown-{self.debate_id}-{event.vote_id}")
        if isinstance(event, HumanVoteOpened) and live and not self._view.buttons:  # buttons: clicks count
            # A window in a caught-up event is not counted: if it is still open after a restart the
            # debate opens it again (a new event), and that one counts what is on the card.
            await self._count_reactions_on_card(event.vote_id, [o.key for o in event.options])
        if isinstance(event, HumanVoteOpened) and event.vote_id in self._started:
            card = [op for op in ops if isinstance(op, Update)]
            await self._window_shown(self._started[event.vote_id], card)

    async def _closing(self, event: DebateCompleted, ops: list[Op], *, live: bool) -> None:
        """The closing card, then its results picture in the thread (drawn while the card is posted)."""

        async def show() -> None:
            for op in ops:
                await self._apply(op)
            if live:
                record_delivery("slack", event)  # delivery lag metric (adapters.metering)

        picture = await drawn_while(show, self._store, event, enabled=self._pictures)
        if picture is not None:
            await self._apply(picture_upload(picture))

    async def _window_shown(self, started: VotingStarted, card: list[Update]) -> None:
        """Tell the debate whether its window's card shows the ballot (every reaction, or the
        buttons) and the countdown: its clock starts then. A ballot Slack refused is tried once
        more, ahead of anything else; if it still cannot show, the window goes on as if nobody
        voted (the debate says so, once)."""
        key = vote_key(started.vote_id)
        reactions = () if self._view.buttons else tuple(option_reactions(started.options).values())
        updated = [all(self._sender.shows(op.key, op.text, op.blocks) for op in card)]  # the countdown

        def is_up() -> bool:
            shown = self._sender.seeded.get(key, set())
            ballot = all(name in shown for name in reactions)
            return key in self._sender.ts_of and ballot and updated[0]

        async def post_again() -> None:
            for op in card:
                await self._send(op)
            updated[0] = all(self._sender.shows(op.key, op.text, op.blocks) for op in card)
            await self._sender.seed(key, reactions)
            if key in self._sender.ts_of:
                self._card_posted(started)

        await self._card_reports.report(
            started.vote_id, is_up=is_up, post_again=None if self._gave_up else post_again
        )

    def _card_posted(self, event: VotingStarted) -> None:
        ts = self._sender.ts_of.get(vote_key(event.vote_id))
        if ts is not None and self._votes.vote_on(ts) is None:
            self._votes.card_posted(event.vote_id, ts, option_reactions(event.options))

    async def _apply(self, op: Op) -> None:
        if isinstance(op, Update) and op.interim:
            if not self._throttle.offer(op):
                return
        elif not isinstance(op, Upload):
            self._throttle.drop(op.key)
        await self._send(op)

    async def _send(self, op: Op) -> None:
        """Carry one op out. The client has already retried what is safe to retry; an interim
        update that fails is superseded by the next one; a final one waits out an outage of Slack
        (`PlatformOutage`); anything else refused is reported in the thread (one notice per kind of
        failure, edited in place)."""
        if self._gave_up or not await self._still_ours():
            return
        interim = isinstance(op, Update) and op.interim
        if interim and (self._outage.down or self._outage.catching_up):
            return  # Slack was down: interim states are dropped until what is owed is shown
        if isinstance(op, Update) and interim and not self._rates["chat.update"].try_take():
            self._throttle.hold(op)  # the workspace's edits are short: finals first, this one later
            platforms.edit_skipped("slack")
            return
        try:
            if interim:
                await self._sender.apply(op)
            else:  # a final state: while Slack is down the debate pauses and this one is tried again
                await self._outage.carry(lambda: self._sender.apply(op), slack_down)
        except ShownElsewhere:
            return
        except SlackApiError as exc:
            error = api_error(exc)
            log.warning("debate %s: Slack refused %s (%s)", self.debate_id, type(op).__name__, error)
            if error in FATAL_ERRORS:
                await self._give_up(error)
            elif not interim:
                await self._refused(error, what=_what(op), cause=f"`{error}`")
        except (*NETWORK_ERRORS, ReadBackDeferred) as exc:
            log.warning("debate %s: could not reach Slack for %s: %r", self.debate_id, type(op).__name__, exc)
            if not interim:
                await self._refused("no_answer", what=_what(op), cause="no answer")

    async def _show_notice(self, kind: str, text: str) -> None:
        try:
            await self._sender.notice(kind, text)
        except (SlackApiError, *NETWORK_ERRORS) as exc:
            log.warning("debate %s: could not post the delivery notice: %r", self.debate_id, exc)

    async def _give_up(self, error: str) -> None:
        """Nothing more can be shown in this thread: stop the debate (it is stored in full)."""
        self._gave_up = True
        await self.stop(f"Rostra can no longer post in this channel ({error})")

    async def _count_reactions_on_card(self, vote_id: str, options: list[str]) -> None:
        ts = self._sender.ts_of.get(vote_key(vote_id))
        if ts is not None:
            read_when = self._votes.recorded(vote_id)  # a vote passed on during the read is newer
            on_card = await read_card(
                self._client, self.channel, ts, what=f"debate {self.debate_id}", bot_user_id=self._bot_user_id
            )
            await self._votes.window_opened(vote_id, options, on_card, read_when=read_when)


def _what(op: Op) -> str:
    """What was refused, as the notice says it."""
    return "an edit" if isinstance(op, Update) else "a file" if isinstance(op, Upload) else "a message"


def _event_of(live: bool) -> Callable[[Item], Event | None]:
    """A queued item's event, when it is one of the kind (live or caught up) being delivered."""
    return lambda item: item.event if isinstance(item, Queued) and item.live == live else None
