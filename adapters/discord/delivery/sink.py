"""Delivers one debate's events into its Discord thread, in order.

`emit` only enqueues (it runs inside the engine's task). The ordered delivery queue (shared with
Slack) has one worker, alive while there is work and cancelled on close; for each event `_deliver`
renders display operations and applies them through the sender, holds back interim edits (the edit
throttle), wires vote cards to reactions and records where everything went (binding values).

Resuming after a restart (`restore`): the stored events are rendered again without sending anything,
up to the last one this thread is known to have received, so the view knows what every message shows;
the recorded message ids say which messages those are. Events stored but never delivered (the bot
was killed with them in its queue) are delivered first, then whatever the debate says next.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence

import discord

from adapters.delivery.closing_picture import closing_picture
from adapters.delivery.openings import shown_together
from adapters.delivery.outage import OutageLimits, PlatformOutage, ShownElsewhere
from adapters.delivery.queue import DeliveryQueue
from adapters.delivery.thread_sink import ThreadSink, cancelling
from adapters.discord.ballots.reactions import CardBallot, CardRegistry
from adapters.discord.ballots.thread import OpenCard, ThreadBallots
from adapters.discord.controls import show_controls
from adapters.discord.delivery.sender import CONNECTION_ERRORS, THREAD_GONE, Sender, Sent, discord_down
from adapters.discord.delivery.slots import DELIVERED_KEY, SLOT_KEY, Slot, restore_slots
from adapters.discord.delivery.throttle import EditThrottle
from adapters.discord.delivery.webhooks import HOST_KEY, SEAT_KEY, PersonaWebhooks
from adapters.discord.render.events import OPENING, DiscordView, vote_slot
from adapters.discord.render.ops import Op, Post, React, Show, merged, route_of
from adapters.discord.render.picture import with_picture
from adapters.discord.settings import DiscordSettings
from adapters.metering import record_delivery
from core.events import (
    ClockTick,
    DebateCompleted,
    DebateStarted,
    Event,
    HumanVoteOpened,
    PhaseChanged,
    TurnDelta,
    VoteCast,
    VoteWithdrawn,
    VotingClosed,
    VotingStarted,
)
from core.ports import Store
from core.session import DebateHandle

log = logging.getLogger(__name__)

MIN_EDIT_INTERVAL = 1.0
"""A persona's streamed text is edited at most once a second, whatever the config says."""
GLOBAL = "global"


class DiscordSink(ThreadSink):
    def __init__(
        self,
        *,
        thread: discord.Thread,
        webhooks: PersonaWebhooks,
        owner_id: int,
        settings: DiscordSettings,
        store: Store,
        cards: CardRegistry,
        on_finished: Callable[[str], None],
        pictures: bool = True,
        outage: OutageLimits | None = None,
        seat: int | None = None,
        taken: Mapping[str, int] | None = None,
    ) -> None:
        self._parent_id = thread.parent_id or 0  # the channel whose persona webhooks it speaks through
        self._seat = webhooks.seat(self._parent_id, seat, taken=taken)  # its persona webhook, kept for good
        self._webhook = webhooks.window(self._parent_id, self._seat)  # shared by the debates on it
        super().__init__(store, PlatformOutage("Discord", outage, shared=self._webhook.route))
        self._pictures = pictures  # the closing card carries the results picture (config results.picture)
        self._sender = Sender(
            thread=thread,
            webhooks=webhooks,
            owner_id=owner_id,
            settings=settings,
            remember=self._remember,
            seat=self._seat,
        )
        self._webhooks: PersonaWebhooks | None = webhooks  # until it leaves its seat on close
        self._thread = thread
        self._me = owner_id  # the bot: its own reactions on a card are no votes
        buttons = settings.ballot == "buttons"  # button ballots (adapters/discord/ballots/buttons.py)
        self._ballots = ThreadBallots(thread, cards, buttons=buttons)
        self._view = DiscordView(streaming=settings.streaming, buttons=buttons)
        self._throttle = EditThrottle(settings.edit_interval, time.monotonic, persona_floor=MIN_EDIT_INTERVAL)
        self._rates = webhooks.rates
        self._on_finished = on_finished
        self._queue: DeliveryQueue[Event, Show] = DeliveryQueue(
            deliver=self._deliver,
            send=self._guarded,
            pacing=self._throttle,
            name=lambda: f"Discord debate {self._debate_id}",
            on_demand=True,
            describe=lambda event: f"{event.kind} #{event.seq}",
            event_of=lambda event: event,  # a window's opening is urgent: its clock waits for its card
            yields=lambda event: isinstance(event, VoteCast | VoteWithdrawn | ClockTick | PhaseChanged),
            fence=self._still_ours,  # taken over by another process: nothing more from here
        )
        self._slots: dict[str, Slot] = {}
        self._closed = False
        self._failing: set[str] = set()  # routes ("webhook", "bot") whose last call failed 5xx/429
        self._notices: dict[str, Sent] = {}  # kind of refusal → its notice (ThreadSink._refused)
        self._metered_since = time.time()  # events stored earlier are caught up, not delivered late
        self._seeded: dict[str, set[str]] = {}  # slot → the ballot reactions the bot added there

    @property
    def thread_id(self) -> int:
        return self._sender.thread_id

    @property
    def placement(self) -> dict[str, str]:
        """The channel's persona webhook it speaks through, stored with the debate as it is created
        (`manager.start(values=)`), so every worker counts that seat from the start (`seats_taken`)."""
        return {HOST_KEY: str(self._parent_id), SEAT_KEY: str(self._seat)}

    def attach(self, handle: DebateHandle) -> None:
        """The running debate (for votes and stop); set right after it starts or resumes."""
        self._bind(handle)
        self._ballots.bind(handle)

    def _card_votes(self, vote_id: str) -> CardBallot | None:
        return self._ballots.card(vote_id)

    def _message_ids(self, slot: str) -> list[int]:
        return [m.id for m in self._slots[slot].messages] if slot in self._slots else []

    # --- resuming --------------------------------------------------------------------------------

    def restore(self, debate_id: str, events: Sequence[Event], values: Mapping[str, str]) -> list[OpenCard]:
        """Rebuild what this thread shows from the stored log and binding values (nothing is sent).

        Returns the vote cards people may still vote on, tracked again for reactions; the caller
        restores the reactions already on them, then calls `catch_up`.
        """
        self._debate_id = debate_id
        self._delivered_before(values, DELIVERED_KEY)
        self._sender.resume(values)
        slots, unsent, open_votes = restore_slots(self._view, events, values)
        for event in unsent:
            self._queue.put(event)  # stored, never shown: delivered first by `catch_up`
        self._slots.update(slots)
        self._view.mark_shown(self._slots)
        open_cards: list[OpenCard] = []
        for event in open_votes:
            ids = self._message_ids(vote_slot(event.vote_id))
            ballot = self._open_ballot(event) if ids else None
            if ballot is not None:
                open_cards.append(OpenCard(event.vote_id, ids[0], ballot))
                self._card_reports.shown_before(event.vote_id)
                self._seeded[vote_slot(event.vote_id)] = {o.emoji for o in event.options if o.emoji}
        return open_cards

    def catch_up(self) -> None:
        """Deliver the stored events the thread never got (see `restore`), before anything new."""
        if self._queue:
            self._queue.start()

    async def resumed(self, handle: DebateHandle) -> None:
        """The debate runs again (after `restore`): attach it and count the reactions on open cards.
        A thread that vanished in the meantime stops it."""
        self.attach(handle)
        if self._closed:
            if not handle.done:
                await handle.stop("the debate thread was deleted")
            return
        await self._ballots.sync()

    async def read_cards_again(self) -> None:
        """Reactions on the open vote cards may have been missed (a new gateway session, here or in
        the process that receives the server's events): read them."""
        if not self._closed:
            await self._ballots.read_again(self._me)

    async def finish(self) -> None:
        """Wait until everything queued is delivered, then close (a debate the core closed itself)."""
        await self._queue.idle()
        await self.aclose()

    # --- the engine's side ---------------------------------------------------------------------

    async def emit(self, event: Event) -> None:
        if self._closed:
            if isinstance(event, DebateCompleted):
                self._on_finished(event.debate_id)
            return
        self._queue.put(event)

    async def aclose(self) -> None:
        if self._webhooks is not None:
            self._webhooks.leave(self._parent_id, self._seat)
        self._webhooks = None
        self._closed = True
        self._outage.leave()
        await self._queue.aclose()
        self._ballots.untrack_all()

    # --- the worker ----------------------------------------------------------------------------

    async def _deliver(self, event: Event) -> None:
        """Show one event (the queue's worker calls it, in order). An event whose delivery failed
        counts as delivered too (the queue logs the failure): it is not shown again after a restart."""
        self._debate_id = self._debate_id or event.debate_id
        events = shown_together(self._queue.pull, event, lambda queued: queued)
        try:
            if isinstance(event, TurnDelta) and self._outage.catching_up:
                self._view.render(event)  # owed after an outage: the turn's final text replaces it
            else:
                await self._show_events(events)
        finally:
            seq = max(e.seq for e in events)
            shown = not isinstance(event, TurnDelta) and not self._closed and not cancelling()
            if shown:
                await self._shown_up_to(seq, DELIVERED_KEY)
            if not self._queue:
                self._outage.caught_up()

    async def _show_events(self, events: list[Event]) -> None:
        ops = merged([op for event in events for op in self._view.render(event)])
        if isinstance(events[0], DebateCompleted):  # drawn within its time limit, else the card goes without
            drawn = await closing_picture(self._store, events[0], enabled=self._pictures and not self._closed)
            ops = with_picture(ops, drawn)
        for op in ops:
            await self._guarded(op)
            if isinstance(events[0], VotingStarted) and isinstance(op, Show):
                self._open_ballot(events[0])  # reactions count from the moment the card exists
        for event in events:
            await self._follow_up(event)
            if isinstance(event, HumanVoteOpened):
                await self._window_shown(event)
            record_delivery("discord", event, since=self._metered_since)  # lag (adapters.metering)

    async def _window_shown(self, window: HumanVoteOpened) -> None:
        """Tell the debate its window's card shows the ballot (reactions or buttons) and countdown:
        the window's clock starts then. A card or ballot that did not get through is tried again."""
        slot = vote_slot(window.vote_id)
        emojis = {o.emoji for o in window.options if o.emoji}

        def is_up() -> bool:
            if not self._message_ids(slot):
                return False
            if self._ballots.buttons:
                return self._ballots.buttons_shown(window.vote_id)
            return emojis <= self._seeded.get(slot, set())

        async def post_again() -> None:
            for op in self._view.open_ballot(window):
                await self._guarded(op)
            started = self._view.started_vote(window.vote_id)
            if started is not None and self._message_ids(slot):
                self._open_ballot(started)
                await self._ballots.window_opened(window, self._message_ids(slot), self._debate_id)

        await self._card_reports.report(
            window.vote_id, is_up=is_up, post_again=None if self._closed else post_again
        )

    async def _guarded(self, op: Op) -> None:
        """Apply one operation. discord.py has already retried what was worth retrying (429, 5xx):
        an interim state that fails is superseded by the next one; a final state that fails is
        reported in the thread, one notice per kind of failure, edited in place as more follow.
        A thread that is gone or forbidden stops the debate."""
        if self._closed or not await self._still_ours():
            return
        route = route_of(op)
        interim = isinstance(op, Show) and op.live
        if interim and (route in self._failing or self._outage.down or self._outage.catching_up):
            return  # Discord is failing there: no interim states until a final one (and the backlog) is shown
        try:
            if interim:
                await self._apply(op)
            else:  # a final state: while Discord is down the debate pauses and this one is tried again
                await self._outage.carry(lambda: self._apply(op), discord_down)
        except ShownElsewhere:
            return
        except CONNECTION_ERRORS as exc:
            log.warning("debate %s: could not reach Discord for %s: %r", self._debate_id, op.slot, exc)
            return
        except discord.HTTPException as exc:
            log.warning("debate %s: Discord refused %s: %s", self._debate_id, op.slot, exc)
            gone = (
                THREAD_GONE.get(exc.code) if isinstance(exc, discord.NotFound | discord.Forbidden) else None
            )
            if gone is not None:
                await self._thread_gone(gone)
                return
            if exc.status >= 500 or exc.status == 429:
                self._failing.add(route)
            if isinstance(op, Show) and op.live:
                return  # an interim state: the next one (or the final one) replaces it
            what = "an edit" if op.slot in self._slots and self._slots[op.slot].messages else "a message"
            kind = "5xx" if exc.status >= 500 else str(exc.status)
            await self._refused(kind, what=what, cause=f"HTTP {exc.status}")
        else:
            self._failing.discard(route)

    async def _show_notice(self, kind: str, text: str) -> None:
        earlier = self._notices.get(kind)
        post = Post(content=text)
        try:
            if earlier is None:
                self._notices[kind] = await self._sender.send(post, key=f"notice:{kind}")
            else:
                self._notices[kind] = await self._sender.edit(earlier, post)
        except discord.HTTPException as exc:
            log.warning("debate %s: could not post the delivery notice (%s)", self._debate_id, exc.status)

    async def _apply(self, op: Op) -> None:
        """One display operation. Every request takes the bot's global window (50 a second) as
        discord.py sends it (`PersonaWebhooks.pacing`); interim states go only while it has room."""
        if isinstance(op, React):
            targets = self._slots.get(op.slot)
            if targets is not None and targets.messages:
                seeded = self._seeded.setdefault(op.slot, set())
                for emoji in op.emojis:
                    if emoji in seeded:
                        continue
                    await self._sender.react(targets.messages[0], emoji)
                    seeded.add(emoji)
            return
        slot = self._slots.get(op.slot)
        first = slot is None or not slot.messages
        update = self._throttle.offer(op, first=first)
        if update is None:
            return
        hook = self._webhook if route_of(update) == "webhook" else None
        if update.live and not (hook is None or hook.try_take()):
            return  # the webhook is busy (other debates' turns too): finals first; a later state posts it
        if first or not update.live:  # a first post and a final state go, in their turn
            if hook is not None and not update.live:
                hook.note()  # discord.py paces the webhook itself
        elif not self._rates[GLOBAL].has_room():
            return  # Discord's rate window is short: finals first; the next state supersedes this one
        await self._show(update)

    async def _show(self, show: Show) -> None:
        slot = self._slots.setdefault(show.slot, Slot())
        before = list(slot.messages)
        try:
            for i, post in enumerate(show.posts):
                if i >= len(slot.messages):
                    slot.messages.append(
                        await self._sender.send(post, key=f"{self._debate_id}:{show.slot}:{i}")
                    )
                    slot.posts.append(post)
                elif slot.posts[i] != post:
                    slot.messages[i] = await self._sender.edit(slot.messages[i], post)
                    slot.posts[i] = post
            while len(slot.messages) > len(show.posts):
                await self._sender.delete(slot.messages.pop())
                slot.posts.pop()
        finally:
            self._throttle.applied(show.slot)
            if slot.messages != before:
                await self._remember(SLOT_KEY + show.slot, ",".join(m.encode() for m in slot.messages))

    # --- what follows an event: ballots, the end -------------------------------------------------

    def _open_ballot(self, event: VotingStarted) -> CardBallot | None:
        return self._ballots.open(event, self._message_ids(vote_slot(event.vote_id)))

    async def _follow_up(self, event: Event) -> None:
        if isinstance(event, DebateStarted | DebateCompleted):  # the opening card's buttons
            await self._opening_buttons(live=isinstance(event, DebateStarted))
        if isinstance(event, HumanVoteOpened):
            ids = self._message_ids(vote_slot(event.vote_id))
            await self._ballots.window_opened(event, ids, self._debate_id)
        elif isinstance(event, VotingClosed):
            ids = self._message_ids(vote_slot(event.vote_id))
            await self._ballots.closed(event.vote_id, ids, self._debate_id)
        elif isinstance(event, DebateCompleted):
            for show in self._throttle.take_all():
                await self._guarded(show)
            self._on_finished(event.debate_id)

    async def _opening_buttons(self, *, live: bool) -> None:
        ids = self._message_ids(OPENING)
        if ids and self._debate_id is not None:
            await show_controls(self._thread, ids[0], self._debate_id, live=live)

    async def _thread_gone(self, reason: str) -> None:
        """Nothing can be shown any more: stop the debate (no more model calls for nobody)."""
        log.warning("debate %s: %s; stopping it", self._debate_id, reason)
        self._queue.clear()
        self._closed = True
        await self.stop(reason)
