"""Picking debates up again after a restart, in the threads they ran in.

Once the bot is ready it asks the core for this platform's debates that a stop or a crash cut
short. For each it finds the thread again (none: the core closes the debate), rebuilds what the
thread shows from the stored log and the recorded message ids, re-tracks the vote cards people may
still vote on (with the reactions already on them, including any made while the bot was away), and
hands the core a sink bound to all that. The core then replays the debate and carries on: the thread
gets only what is new.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import discord

from adapters.discord.ballots.thread import OpenCard, read_card
from adapters.discord.delivery.desk import DebateDesk, Running
from adapters.discord.delivery.sender import CONNECTION_ERRORS, WEBHOOK_KEY
from adapters.discord.delivery.sink import DiscordSink
from adapters.discord.delivery.slots import as_int, recorded_slots
from adapters.discord.delivery.webhooks import SEAT_KEY, PersonaWebhooks, WebhookHost
from adapters.discord.launch import PLATFORM, THREAD_KEY
from adapters.discord.results import START_CARD_KEY, DiscordResults
from adapters.host import Host
from adapters.resuming import Reattachments
from core.errors import PlatformUnavailable
from core.ports import DebateRecord
from core.session import DebateHandle
from core.state import DebateState

log = logging.getLogger(__name__)

READ_BACK = 20  # messages read after the newest recorded one on resume (a dead owner left at most one)


@dataclass(frozen=True)
class Reattached:
    sink: DiscordSink
    thread_id: int
    start_card: str | None = None  # `<channel id>:<message id>` (adapters/discord/results.py)


class Resumer:
    def __init__(self, client: discord.Client, rt: Host, desk: DebateDesk, webhooks: PersonaWebhooks) -> None:
        self.client = client
        self.rt = rt
        self.desk = desk
        self.webhooks = webhooks
        self.settings = rt.config.discord
        self.results: DiscordResults | None = None  # set by the bot: results of resumed debates

    def _finished(self, debate_id: str) -> None:
        self.desk.finished(debate_id)
        if self.results is not None:
            self.results.ended(debate_id)

    def _follow_result(self, debate_id: str, again: Reattached) -> None:
        channel_id, _, message_id = (again.start_card or "").partition(":")
        if self.results is None or not channel_id.isdigit() or not message_id.isdigit():
            return
        channel = self.client.get_partial_messageable(int(channel_id))
        card = channel.get_partial_message(int(message_id))
        self.results.follow(debate_id, channel=channel, thread_id=again.thread_id, card=card)

    async def run(self) -> None:
        """Resume every debate of this platform that was cut short (once, when the bot is ready)."""
        threads = Reattachments(
            self.reattach, lambda again: again.sink, bind=self._bind, close=lambda again: again.sink.finish()
        )  # closed: its last words follow
        try:
            await threads.resume(self.rt.recovery, PLATFORM)
        finally:
            for again in threads.abandoned():
                await again.sink.aclose()

    async def _bind(self, handle: DebateHandle, again: Reattached) -> None:
        """A reattached sink to its resumed debate: the desk, the result, the votes on its cards."""
        self.desk.add(Running(handle, again.sink))
        self._follow_result(handle.debate_id, again)
        await again.sink.resumed(handle)
        log.info("debate %s resumed in thread %s", handle.debate_id, again.thread_id)

    async def reattach(self, record: DebateRecord, values: dict[str, str]) -> Reattached | None:
        """A sink bound to the debate's thread and messages; None when the thread is gone."""
        thread_id = as_int(values.get(THREAD_KEY)) or as_int(record.binding.channel)
        me = self.client.user
        thread = await self._thread(thread_id) if thread_id is not None else None
        if thread is None or me is None:
            log.warning("debate %s: its thread %s is gone; it cannot resume", record.id, thread_id)
            return None
        sink = DiscordSink(
            thread=thread,
            webhooks=self.webhooks,
            owner_id=me.id,
            settings=self.settings,
            store=self.rt.store,
            cards=self.desk.cards,
            on_finished=self._finished,
            pictures=self.rt.config.results.picture,
            seat=as_int(values.get(SEAT_KEY, "0")),  # the webhook that posted its messages
        )
        await self._unarchive(thread)
        events = await self.rt.store.events(record.id)
        await self._drop_unrecorded(thread, values)
        cards = sink.restore(record.id, events, values)
        if cards:
            state = DebateState.replay(record.id, events)
            for card in cards:
                await self._restore_reactions(thread, card, state, me.id)
        sink.catch_up()
        return Reattached(sink, thread.id, values.get(START_CARD_KEY))

    async def _drop_unrecorded(self, thread: discord.Thread, values: dict[str, str]) -> None:
        """Persona messages the last owner posted but did not live to record (killed mid-post) are
        deleted: the debate shows those turns again from its log, so they would show twice. They are
        the persona webhook's messages after the newest recorded one that no slot names."""
        recorded = {sent.id for _, messages in recorded_slots(values) for sent in messages}
        hook_id = as_int(values.get(WEBHOOK_KEY))
        parent, me = thread.parent, self.client.user
        if not recorded or hook_id is None or me is None or not isinstance(parent, WebhookHost):
            return
        try:
            after = discord.Object(id=max(recorded))
            found = [m async for m in thread.history(after=after, limit=READ_BACK, oldest_first=True)]
            unrecorded = [m for m in found if m.webhook_id == hook_id and m.id not in recorded]
            hook = await self.webhooks.get(parent, me.id) if unrecorded else None
            if hook is None or hook.id != hook_id:
                return
            for message in unrecorded:
                log.info("thread %s: deleting message %s, posted but never recorded", thread.id, message.id)
                await hook.delete_message(message.id, thread=thread)
        except discord.HTTPException as exc:
            log.warning("thread %s: could not look for unrecorded messages (%s)", thread.id, exc.status)

    async def _thread(self, thread_id: int) -> discord.Thread | None:
        """The debate's thread; None when it is gone or forbidden (discord.py retries 429 and 5xx).
        Raises PlatformUnavailable when Discord still fails after those retries."""
        channel = self.client.get_channel(thread_id)
        if channel is None:
            try:
                channel = await self.client.fetch_channel(thread_id)
            except (discord.NotFound, discord.Forbidden):
                return None
            except (discord.DiscordServerError, *CONNECTION_ERRORS) as exc:
                raise PlatformUnavailable(f"Discord is not answering ({exc})") from None
        return channel if isinstance(channel, discord.Thread) else None

    @staticmethod
    async def _unarchive(thread: discord.Thread) -> None:
        """A thread that archived itself while the bot was away must be open to edit its messages."""
        if not thread.archived or thread.locked:
            return
        try:
            await thread.edit(archived=False)
        except discord.HTTPException as exc:
            log.warning("could not unarchive thread %s (%s); posting there reopens it", thread.id, exc.status)

    async def _restore_reactions(
        self, thread: discord.Thread, card: OpenCard, state: DebateState, me: int
    ) -> None:
        """Who reacts with what on the card now; people's stored votes say which reaction is whose
        vote when someone shows several."""
        people = await read_card(thread, card.message_id, card.ballot, me)
        if people is None:  # gone, or Discord is unwell: new reactions still count
            return
        record = state.ballots.get(card.vote_id)
        voted = {p: v.choice for p, v in record.human_votes.items()} if record is not None else {}
        window = record.human_window.options if record is not None and record.human_window else None
        card.ballot.restore_card(people, voted, window)
