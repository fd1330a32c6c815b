"""Starts debates, owns their tasks, and finds them again (by id or by channel)."""

from __future__ import annotations

import contextlib
import logging
import random
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel

from core.clock import Clock
from core.errors import (
    TOO_MANY_DEBATES,
    AdmissionError,
    BallotClosedError,
    SpecError,
    StoreError,
)
from core.events import CompletionReason, DebateCompleted, Event, Notice
from core.formats import FORMATS, DebateFormat, Outcome
from core.left_for_owner import apply_left
from core.llm.memo import CallMemo
from core.llm.registry import ModelRegistry
from core.observe import DebateTags, EventObserver, ObservedSink
from core.outlasting import Waiting, confirmed_now
from core.ports import Binding, BindingValues, ChannelClaim, DebateRecord, EventSink, Store
from core.prepare import (
    AlreadyEnded,
    CannotResume,
    LeasedElsewhere,
    PreparedDebate,
    prepare_debate,
    running_elsewhere,
)
from core.relayed_votes import CardsToRead, RelayedReaction, RelayedVote
from core.replay import Replay
from core.session import STATUS_OF_REASON, DebateHandle, DebateSession, DebateStatusView, status_from_log
from core.settings import CoreSettings
from core.spec import DebateSpec
from core.spending import SpendLedger
from core.stopping import StopAnswer, request_stop, stop_left_for, take_stop

log = logging.getLogger(__name__)


class DebateManager:
    def __init__(
        self,
        *,
        settings: CoreSettings,
        store: Store,
        models: ModelRegistry,
        clock: Clock,
        formats: Mapping[str, type[DebateFormat]] = FORMATS,
    ) -> None:
        self.settings = settings
        self.store = store
        self.models = models
        self.clock = clock
        self.formats = dict(formats)
        self._sessions: dict[str, DebateSession] = {}
        self._stopped_by_store: dict[str, str] = {}  # debates the store stopped, to say so on resume
        # The daily spend ledger and whatever else watches the events.
        self.spending = SpendLedger(settings.limits, store)
        self.observers: list[EventObserver] = [self.spending]

    def prepare(self, spec: DebateSpec) -> PreparedDebate:
        """Check a request without starting it. Raises SpecError or ModelConfigError."""
        return prepare_debate(spec, self.settings, self.models, self.formats)

    def _session(
        self,
        *,
        debate_id: str,
        spec: DebateSpec,
        binding: Binding,
        format_cls: type[DebateFormat] | None,
        options: BaseModel | None,
        sink: EventSink,
        seed: int,
        replay: Replay | None = None,
        recorded_calls: dict[tuple[str, int], str] | None = None,
        resume_notice: Notice | None = None,
    ) -> DebateSession:
        memo = CallMemo(recorded_calls)
        session = DebateSession(
            debate_id=debate_id,
            spec=spec,
            binding=binding,
            format_cls=format_cls,
            options=options,
            settings=self.settings,
            store=self.store,
            sink=ObservedSink(
                sink, self.observers, DebateTags(debate_id, spec.format, binding.platform, binding.scope)
            ),
            clock=self.clock,
            models=self.models.for_debate(seed=seed, topic=spec.topic, memo=memo, debate_id=debate_id),
            seed=seed,
            replay=replay,
            resume_notice=resume_notice,
        )
        memo.set_recorder(session.record_call)
        session.window_clock.take_relayed = lambda: self.deliver_votes(debate_id)
        return session

    def _run(self, session: DebateSession) -> DebateHandle:
        self._sessions[session.debate_id] = session
        session.start()
        session.on_done(lambda _: self._forget(session))
        return DebateHandle(session)

    def _stored_session(
        self,
        record: DebateRecord,
        format_cls: type[DebateFormat] | None,
        options: BaseModel | None,
        sink: EventSink,
        events: list[Event],
        recorded_calls: dict[tuple[str, int], str] | None = None,
        resume_notice: Notice | None = None,
    ) -> DebateSession:
        """A session for a stored debate, replaying its log."""
        return self._session(
            debate_id=record.id,
            spec=DebateSpec(record.format, record.topic, dict(record.spec.get("options", {}))),
            binding=record.binding,
            format_cls=format_cls,
            options=options,
            sink=sink,
            seed=int(record.spec.get("seed", 0)),
            replay=Replay(events),
            recorded_calls=recorded_calls,
            resume_notice=resume_notice,
        )

    async def _take_lease(self, record: DebateRecord) -> None:
        """Own the debate before touching it; LeasedElsewhere when a live process runs it."""
        if not await self.store.acquire(record.id):
            current = await self.store.get_debate(record.id) or record
            raise LeasedElsewhere(running_elsewhere(current))

    async def resume(
        self, record: DebateRecord, sink: EventSink, *, notice: Notice | None = None
    ) -> DebateHandle:
        """Continue a stored debate from its event log (see core.replay), taking its lease first
        (LeasedElsewhere when another live process holds it). CannotResume when its format or options
        no longer fit this Rostra's code or config; `notice` is said in the thread once the log has
        been replayed (why it stopped, say)."""
        if record.id in self._sessions:
            raise CannotResume("it is already running")
        await self._take_lease(record)
        try:
            return await self._resume_owned(record, sink, notice)
        except BaseException:
            if record.id not in self._sessions:
                with contextlib.suppress(StoreError):
                    await self.store.release(record.id)
            raise

    async def _resume_owned(
        self, record: DebateRecord, sink: EventSink, notice: Notice | None
    ) -> DebateHandle:
        format_cls = self.formats.get(record.format)
        if format_cls is None:
            raise CannotResume(f"its format {record.format!r} no longer exists")
        try:
            options = format_cls.parse_options(self.settings, dict(record.spec.get("options", {})))
        except SpecError as exc:
            raise CannotResume(f"its options no longer fit the configuration ({exc})") from None
        events = await self.store.events(record.id)
        if events and isinstance(events[-1], DebateCompleted):  # it ended; only its status was lost
            await self.store.set_status(record.id, STATUS_OF_REASON[events[-1].reason], events[-1].detail)
            raise AlreadyEnded(f"debate {record.id} had already ended")
        stopped = self._stopped_by_store.pop(record.id, None)
        if notice is None and (stopped is not None or record.reason.startswith("interrupted: the database")):
            notice = Notice(
                level="warning",
                code="store_resumed",
                message="This debate stopped for a while because Rostra's database was unavailable;"
                " it goes on from where it stopped.",
            )
        session = self._stored_session(
            record,
            format_cls,
            options,
            sink,
            events,
            recorded_calls=await self.store.calls(record.id),
            resume_notice=notice,
        )
        await self.store.set_status(record.id, "running", "resumed after a restart")
        log.info("debate %s resumed from %d stored events", record.id, len(events))
        stop = await stop_left_for(self.store, record.id)  # asked while no process ran it
        if stop is not None:  # before it runs: the turn in progress is closed as cut short, not redone
            session.request_stop(stop)
        handle = self._run(session)
        if stop is not None:
            with contextlib.suppress(StoreError):
                await self.store.take_votes(record.id)  # the votes with it no longer count
        return handle

    async def close_stored(
        self, record: DebateRecord, sink: EventSink, *, reason: CompletionReason, message: str
    ) -> None:
        """End a stored debate without running it: a notice saying why, then its closing event."""
        await self._take_lease(record)
        format_cls = self.formats.get(record.format)
        options: BaseModel | None = None
        if format_cls is not None:
            try:
                options = format_cls.parse_options(self.settings, dict(record.spec.get("options", {})))
            except SpecError:
                format_cls = None  # the debate will not run; it is only closed, with its figures
        session = self._stored_session(record, format_cls, options, sink, await self.store.events(record.id))
        level: Literal["warning", "error"] = "error" if reason == "failed" else "warning"
        await session.close_from_log(
            Outcome(reason, detail=message), Notice(level=level, code="not_resumed", message=message)
        )

    async def start(
        self,
        spec: DebateSpec,
        sink: EventSink,
        *,
        binding: Binding | None = None,
        seed: int | None = None,
        claim: ChannelClaim | None = None,
        values: BindingValues | None = None,
    ) -> DebateHandle:
        """Start a debate into `sink`: stored first, with `values` (where it lives on its platform:
        `Store.create_debate`), under the start's `claim` when it has one."""
        prepared = self.prepare(spec)
        if len(self._sessions) >= self.settings.limits.max_concurrent_debates:
            raise AdmissionError(TOO_MANY_DEBATES)
        debate_id = secrets.token_hex(4)
        seed = seed if seed is not None else random.SystemRandom().randrange(1, 2**31)
        binding = binding or Binding()
        await self.spending.check(platform=binding.platform, scope=binding.scope)  # daily budgets (money)
        now = datetime.now(UTC)
        await self.store.create_debate(
            DebateRecord(
                id=debate_id,
                format=prepared.spec.format,
                topic=prepared.spec.topic,
                spec={
                    "format": prepared.spec.format,
                    "topic": prepared.spec.topic,
                    "options": prepared.options.model_dump(),
                    "seed": seed,
                },
                status="running",
                binding=binding,
                created_at=now,
                updated_at=now,
            ),
            claim=claim,
            values=values,
        )
        handle = self._run(
            self._session(
                debate_id=debate_id,
                spec=prepared.spec,
                binding=binding,
                format_cls=prepared.format_cls,
                options=prepared.options,
                sink=sink,
                seed=seed,
            )
        )
        log.info("debate %s started (%s): %s", debate_id, prepared.spec.format, prepared.spec.topic)
        return handle

    # --- votes from any process ---------------------------------------------------------------

    async def cast_vote(
        self,
        debate_id: str,
        vote_id: str,
        voter_id: str,
        choice: str | None,
        *,
        voter_name: str | None = None,
    ) -> None:
        """A person's vote (None withdraws it), whichever process runs the debate.

        Here: straight to the debate (BallotError when refused). Elsewhere: left in the store for the
        owner, which picks it up at once (Postgres NOTIFY) or within `storage.poll_seconds` (SQLite).
        """
        session = self._sessions.get(debate_id)
        if session is not None and not session.done:  # (a copy that ended here, taken over: elsewhere)
            handle = DebateHandle(session)
            if choice is None:
                await handle.withdraw_human_vote(vote_id, voter_id)
            else:
                await handle.cast_human_vote(vote_id, voter_id, choice, voter_name=voter_name)
            return
        await self._leave(debate_id, RelayedVote(vote_id, voter_id, choice, voter_name).payload())

    async def relay_reaction(self, debate_id: str, reaction: RelayedReaction) -> None:
        """A reaction on a card of the debate, made through this process: left in the store for the
        owner (this one too), whose card ballot applies it; BallotClosedError once the debate ended."""
        await self._leave(debate_id, reaction.payload())

    async def ask_cards_read(self, debate_id: str) -> None:
        """Reactions on the debate's cards may have been missed here: its owner reads them again."""
        await self._leave(debate_id, CardsToRead().payload())

    async def _leave(self, debate_id: str, payload: str) -> None:
        record = await self.store.get_debate(debate_id)
        if record is None or record.status != "running":
            raise BallotClosedError("The debate has ended.")
        await self.store.post_vote(debate_id, payload)  # stored: counted by the window's close

    # --- controls and questions from any process ----------------------------------------------

    async def find_running(self, *, platform: str, channel: str) -> DebateRecord | None:
        """The debate running in a channel (or started from it), in any process: read from the store."""
        return await self.store.find_running(platform, channel)

    async def request_stop(
        self, debate_id: str, reason: str = "stopped", *, wait: float = 10.0, waiting: Waiting | None = None
    ) -> StopAnswer:
        """Stop a debate, whichever process runs it, waiting out the store's outages; what happened,
        for the person who asked (`core.stopping.request_stop`)."""
        limits = self.settings.storage
        return await request_stop(self._sessions, self.store, debate_id, reason, wait, limits, waiting)

    async def status_of(self, debate_id: str) -> DebateStatusView | None:
        """A running debate's status, whichever process runs it (None once it ended): this process's
        own view, else one rebuilt from the stored log (as of its last tick); StoreUnavailable now."""
        session = self._sessions.get(debate_id)
        if session is not None and not session.done and await confirmed_now(session.still_ours()):
            return session.status()
        record = await self.store.get_debate(debate_id)
        if record is None or record.status != "running":
            return None
        return status_from_log(record, await self.store.events(debate_id))

    async def deliver_votes_forever(self) -> None:
        """Apply the votes other processes left for the debates running here, as they arrive."""
        while True:
            await self.store.wait_for_votes()
            for debate_id in list(self._sessions):
                try:
                    await self.deliver_votes(debate_id)
                except StoreError as exc:
                    log.warning("debate %s: could not take its votes from the store: %s", debate_id, exc)

    async def take_stop(self, debate_id: str) -> None:
        """A Stop left for a debate just taken over, applied while it catches up (`core.stopping`)."""
        await take_stop(self._sessions.get(debate_id), self.store)

    async def deliver_votes(self, debate_id: str) -> None:
        """Apply what other processes left in the store for a debate run here (Stops, votes), one
        taking at a time so they count in the order left; a resumed debate takes them once it caught
        up with its log (a vote cast while it replays would be refused); they wait until then."""
        session = self._sessions.get(debate_id)
        if session is None or session.done or session.catching_up:
            return

        async def cast(v: RelayedVote) -> None:
            await self.cast_vote(debate_id, v.vote_id, v.voter_id, v.choice, voter_name=v.voter_name)

        async with session.window_clock.taking:
            for payload in await self.store.take_votes(debate_id):
                await apply_left(session, payload, cast)

    def _forget(self, session: DebateSession) -> None:
        if self._sessions.get(session.debate_id) is session:
            del self._sessions[session.debate_id]
        if session.store_failure is not None:
            self._stopped_by_store[session.debate_id] = session.store_failure

    def get(self, debate_id: str) -> DebateHandle | None:
        session = self._sessions.get(debate_id)
        return DebateHandle(session) if session is not None else None

    def running(self) -> list[DebateHandle]:
        return [DebateHandle(s) for s in self._sessions.values()]

    def find(self, *, platform: str, channel: str) -> DebateHandle | None:
        for session in self._sessions.values():
            if session.binding.platform == platform and session.binding.channel == channel:
                return DebateHandle(session)
        return None

    async def aclose(self) -> None:
        """Cancel every running debate; each is left `interrupted` in the store."""
        for session in list(self._sessions.values()):
            await session.cancel()
        self._sessions.clear()
