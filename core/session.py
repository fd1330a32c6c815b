"""One running debate: the emit path (store first, then the sink), its task, stop, and the handle.

The session is the error funnel for its debate: whatever happens inside the format, a
`DebateCompleted` is emitted and the stored status is updated.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from core.budget import BudgetExhausted
from core.clock import Clock, DebateClock
from core.errors import BallotClosedError, LeaseLost, StoreError, StoreGaveUp, StoreUnavailable
from core.events import ClockTick, DebateCompleted, HumanVoteOpened, Notice, TurnCompleted, VotingClosed
from core.formats.base import DebateContext, DebateFormat, Emitter, Outcome
from core.llm.registry import DebateModels
from core.models import Statistics, VoteOption
from core.ports import Binding, DebateStatus, EventSink, Store
from core.replay import Replay, ResumeMismatch
from core.settings import CoreSettings
from core.spec import DebateSpec
from core.state import DebateState
from core.voting import CardsShown, HumanBallots
from core.words import plural

log = logging.getLogger(__name__)

T = TypeVar("T")

STATUS_OF_REASON: dict[str, DebateStatus] = {
    "completed": "completed",
    "time_up": "completed",
    "max_rounds": "completed",
    "budget": "completed",
    "stopped": "stopped",
    "failed": "failed",
    "interrupted": "interrupted",
}


@dataclass(frozen=True)
class DebateResult:
    debate_id: str
    reason: str
    detail: str
    summary: str
    stats: Statistics


@dataclass(frozen=True)
class DebateStatusView:
    """What `/debate status` shows."""

    debate_id: str
    format: str
    topic: str
    phase: str
    round: int
    speaker: str | None
    elapsed: float
    remaining: float | None
    turns: int


class DebateSession:
    def __init__(
        self,
        *,
        debate_id: str,
        spec: DebateSpec,
        binding: Binding,
        format_cls: type[DebateFormat] | None,
        options: Any,
        settings: CoreSettings,
        store: Store,
        sink: EventSink,
        clock: Clock,
        models: DebateModels,
        seed: int,
        replay: Replay | None = None,
        resume_notice: Notice | None = None,
    ) -> None:
        self.debate_id = debate_id
        self.spec = spec
        self.binding = binding
        self.state = DebateState(debate_id)
        self._store = store
        self._sink = sink
        self._lock = asyncio.Lock()
        self._delivering: asyncio.Task[Any] | None = None
        self._replay = replay
        self._seq = replay.last_seq if replay is not None else 0
        self._stop_reason: str | None = None
        self._storage = settings.storage
        self._store_failure: str | None = None  # the store stayed unavailable: the debate stops here
        self._lease_lost = False  # another process owns the debate now: not a word more from here
        self._single_try = False
        self._outage_note: str | None = None  # said in the thread once the store takes writes again
        self._pending_notice = resume_notice  # said once the replay has caught up
        self._inner: asyncio.Task[Outcome] | None = None
        self._task: asyncio.Task[None] | None = None
        self._result: asyncio.Future[DebateResult] = asyncio.get_running_loop().create_future()
        emit = Emitter(self.emit)
        cards = CardsShown() if getattr(sink, "reports_cards_shown", False) else None
        self.ballots = HumanBallots(self.emit, self.state, clock, self if replay is not None else None, cards)
        duration = format_cls.duration(options) if format_cls is not None else None
        self.debate_clock = DebateClock(clock, duration)
        self.ctx = DebateContext(
            debate_id=debate_id,
            topic=spec.topic,
            seed=seed,
            settings=settings,
            models=models,
            clock=clock,
            debate_clock=self.debate_clock,
            state=self.state,
            emit=emit,
            ballots=self.ballots,
            replay=replay,
        )
        # None only for a stored debate that is closed without running (its format is gone)
        self.format = format_cls(self.ctx, options) if format_cls is not None else None

    # --- emitting ------------------------------------------------------------------------------

    async def emit(self, event: Any) -> Any:
        """Stamp `event`, store it, apply it to the state, then hand it to the sink.

        An emit always runs to the end, even when its caller is cancelled (a stop lands mid-write):
        otherwise the in-memory seq, the state and the log could part ways. A sink may emit from
        inside its own `emit` (e.g. cast the votes already on a ballot when a window opens): that
        nested emit runs at once, so the store and the sink still see one order.
        """
        if self._delivering is not None and self._delivering is asyncio.current_task():
            return await self._emit_locked(event)
        emitting = asyncio.ensure_future(self._emit_in_order(event))
        try:
            return await asyncio.shield(emitting)
        except asyncio.CancelledError:
            await asyncio.wait([emitting])  # finish the write, then let the cancellation through
            raise

    async def _emit_in_order(self, event: Any) -> Any:
        async with self._lock:
            self._delivering = asyncio.current_task()
            try:
                return await self._emit_locked(event)
            finally:
                self._delivering = None

    async def _emit_locked(self, event: Any) -> Any:
        replay = self._replay
        if replay is not None and replay.active:
            self._apply_stored(replay.passive())
            if replay.active:
                stored = replay.match(event)
                self._apply_stored([stored])
                self._apply_stored(replay.passive())
                if not replay.active:
                    log.info(
                        "debate %s: caught up with its log at #%d; live again", self.debate_id, self._seq
                    )
                return stored
        if self._pending_notice is not None and not isinstance(event, Notice):
            notice, self._pending_notice = self._pending_notice, None
            await self._emit_locked(notice)
        self._seq += 1
        update: dict[str, Any] = {"debate_id": self.debate_id, "seq": self._seq, "at": datetime.now(UTC)}
        if isinstance(event, TurnCompleted) and event.elapsed is None:
            update["elapsed"] = self.debate_clock.elapsed
        elif isinstance(event, ClockTick):
            update["paused_total"] = self.debate_clock.paused_total
        stamped = event.model_copy(update=update)
        try:
            await self._stored(lambda: self._store.append(stamped))
        except Exception:
            self._seq -= 1  # not stored: the next event takes this seq
            raise
        self.state.apply(stamped)
        try:
            await self._sink.emit(stamped)
        except Exception:
            log.exception("debate %s: the sink failed on %s #%d", self.debate_id, stamped.kind, stamped.seq)
        if self._outage_note is not None:
            note, self._outage_note = self._outage_note, None
            await self._emit_locked(Notice(level="warning", code="store_paused", message=note))
        return stamped

    # --- the store, with its faults waited out ---------------------------------------------------

    async def _stored(self, write: Callable[[], Awaitable[T]]) -> T:
        """Run one store write; transient faults are retried with backoff while the debate pauses.

        While the store is unavailable nothing is stored, so nothing is shown and no model is asked
        (every path to one goes through here), and the debate clock stands still. Past
        `storage.outage_limit` the debate stops (`interrupted`, resumable); a lost lease stops it
        without another write.
        """
        if self._lease_lost:
            raise LeaseLost(f"debate {self.debate_id} is owned by another process")
        if self._store_failure is not None and not self._single_try:
            raise StoreGaveUp(self._store_failure)
        limits = self._storage
        delay = limits.retry_initial
        began: float | None = None
        paused_here = False
        while True:
            try:
                result = await write()
            except StoreUnavailable as exc:
                if self._single_try:
                    raise
                now = time.monotonic()
                if began is None:
                    began = now
                    log.warning("debate %s paused: %s", self.debate_id, exc)
                    if not self.debate_clock.paused:
                        self.debate_clock.pause()
                        paused_here = True
                waited = now - began
                if waited >= limits.outage_limit:
                    self._give_up(f"the database was unavailable for {waited:.0f} s ({exc})")
                    raise StoreGaveUp(self._store_failure or str(exc)) from exc
                await asyncio.sleep(min(delay, limits.outage_limit - waited))
                delay = min(delay * 2, limits.retry_max)
                continue
            except LeaseLost:
                self._lose_lease()
                raise
            if began is not None:
                waited = time.monotonic() - began
                if paused_here:
                    self.debate_clock.resume()
                log.warning("debate %s: the store is back after %.1f s", self.debate_id, waited)
                self._outage_note = (
                    f"Paused for {waited:.0f} s: Rostra's database was unavailable. Nothing was lost;"
                    " the debate goes on."
                )
            return result

    def _give_up(self, reason: str) -> None:
        if self._store_failure is None:
            self._store_failure = reason
            log.error("debate %s stops: %s", self.debate_id, reason)
        if self._inner is not None and self._inner is not asyncio.current_task():
            self._inner.cancel()

    def _lose_lease(self) -> None:
        if not self._lease_lost:
            self._lease_lost = True
            log.warning("debate %s: another process owns it now; this one stops", self.debate_id)
        if self._inner is not None and self._inner is not asyncio.current_task():
            self._inner.cancel()

    async def record_call(self, key: str, n: int, payload: str) -> None:
        """Remember a model call's result (waits out store faults like an event does)."""
        await self._stored(lambda: self._store.record_call(self.debate_id, key, n, payload))

    def _apply_stored(self, events: list[Any]) -> None:
        """Events from the stored log: into the state, and their clock readings into the clock."""
        for event in events:
            self.state.apply(event)
            if isinstance(event, TurnCompleted) and event.elapsed is not None:
                clock = self.debate_clock
                clock.restore(elapsed=event.elapsed, paused_total=clock.paused_total, paused=clock.paused)
            elif isinstance(event, ClockTick):
                self.debate_clock.restore(
                    elapsed=event.elapsed, paused_total=event.paused_total, paused=event.paused
                )

    @property
    def store_failure(self) -> str | None:
        """Why the store stopped this debate (it stays resumable), if it did."""
        return self._store_failure

    # --- what a resumed debate's vote windows ask (WindowResume) ----------------------------------

    @property
    def replaying(self) -> bool:
        return self._replay is not None and self._replay.active

    def logged(self, event: HumanVoteOpened) -> bool:
        return self._replay is not None and event.seq <= self._replay.last_seq

    def window_closed_ahead(self, vote_id: str) -> bool:
        return self._replay is not None and self._replay.window_closed_ahead(vote_id)

    def people_tally(self, vote_id: str, options: Sequence[VoteOption]) -> dict[str, int]:
        assert self._replay is not None
        return self._replay.people_tally(vote_id, options)

    def reopen(self, opened: HumanVoteOpened, window: float) -> float:
        """The window was open when the bot stopped: apply what is left of the log; the time left."""
        assert self._replay is not None
        left = self._replay.time_left(opened, window)
        self._apply_stored(self._replay.rest())
        return left

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"debate-{self.debate_id}")

    @property
    def done(self) -> bool:
        return self._result.done()

    def on_done(self, callback: Callable[[], None]) -> None:
        self._result.add_done_callback(lambda _: callback())

    async def wait(self) -> DebateResult:
        return await asyncio.shield(self._result)

    def request_stop(self, reason: str) -> None:
        if self._stop_reason is None and not self.done:
            self._stop_reason = reason
            if self._inner is not None:
                self._inner.cancel()

    async def cancel(self) -> None:
        """Shutdown: stop the task without closing the debate (it stays resumable)."""
        self._single_try = True  # a write waiting out a store outage gives up now, not at the limit
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if not self.done:  # cancelled before it ever ran
            await self._interrupted()

    async def _run(self) -> None:
        outcome: Outcome
        try:
            if self.format is None:
                raise RuntimeError("a debate without a format cannot run")
            self._inner = asyncio.create_task(self.format.run(), name=f"debate-{self.debate_id}-format")
            if self._stop_reason is not None:
                self._inner.cancel()
            try:
                outcome = await self._inner
            except BudgetExhausted as spent:  # a call the budget could not cover was not made
                log.info("debate %s: %s", self.debate_id, spent)
                outcome = Outcome("budget", detail=self.ctx.budget_note())
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                if self._store_failure is not None or self._lease_lost:
                    await self._end_without_store()
                    return
                if self._stop_reason is None:
                    raise
                outcome = Outcome("stopped", detail=self._stop_reason)
        except asyncio.CancelledError:
            await self._interrupted()
            await self.ctx.models.aclose()
            raise
        except Exception as raised:
            exc = real_error(raised)
            stops_here = isinstance(exc, StoreGaveUp | LeaseLost)
            if self._store_failure is not None or self._lease_lost or stops_here:
                if isinstance(exc, StoreGaveUp) and self._store_failure is None:
                    self._store_failure = str(exc)
                await self._end_without_store()
                return
            if self._replay is not None and self._replay.active:
                self._apply_stored(self._replay.rest())  # what follows is new, whatever happened
            if isinstance(exc, BudgetExhausted):  # raised inside a task group (parallel calls)
                log.info("debate %s: %s", self.debate_id, exc)
                outcome = Outcome("budget", detail=self.ctx.budget_note())
            elif isinstance(exc, ResumeMismatch):
                log.warning("debate %s cannot be resumed: %s", self.debate_id, exc)
                outcome = Outcome("failed", detail=f"could not be resumed: {exc}")
                message = f"This debate could not be resumed after a restart: {exc}."
            else:
                log.exception("debate %s failed", self.debate_id)
                outcome = Outcome("failed", detail=f"{type(exc).__name__}: {exc}")
                message = f"The debate hit an error: {exc}"
            if not isinstance(exc, BudgetExhausted):
                try:
                    await self.emit(Notice(level="error", code="debate_failed", message=message))
                except Exception:
                    log.exception("debate %s: could not record the failure notice", self.debate_id)
        finishing = asyncio.ensure_future(self._finish(outcome))
        try:
            await asyncio.shield(finishing)  # a shutdown now must not leave a finished debate "running"
        except asyncio.CancelledError:
            await asyncio.wait([finishing])
            raise
        finally:
            await self.ctx.models.aclose()

    async def _end_without_store(self) -> None:
        """The store stayed unavailable, or the lease is gone: stop, resumable, writing what we can.

        With the store down, the notice and the status are each tried once (they land if it is back);
        the debate stays `running` or `interrupted` in the log either way, and is resumed (with the
        notice) once the store takes writes again. Without the lease nothing is written at all.
        """
        try:
            if self._lease_lost:
                detail = "another Rostra process took this debate over"
            else:
                detail = f"interrupted: {self._store_failure}"
                self._single_try = True
                message = (
                    f"This debate stopped: {self._store_failure}. It goes on from here once the"
                    " database is back."
                )
                try:
                    await self.emit(Notice(level="error", code="store_unavailable", message=message))
                    await self._stored(lambda: self._store.set_status(self.debate_id, "interrupted", detail))
                except StoreError as exc:
                    log.warning("debate %s: could not record why it stopped: %s", self.debate_id, exc)
                    with contextlib.suppress(StoreError):
                        await self._store.release(self.debate_id)
        finally:
            await self.ctx.models.aclose()
            if not self._result.done():
                self._result.set_result(DebateResult(self.debate_id, "interrupted", detail, "", Statistics()))

    async def close_from_log(self, outcome: Outcome, notice: Notice) -> DebateResult:
        """End a stored debate without running it (it cannot or may not be resumed), saying why."""
        if self._replay is not None:
            self._apply_stored(self._replay.rest())
        try:
            await self.emit(notice)
        except Exception:
            log.exception("debate %s: could not record why it closed", self.debate_id)
        await self._finish(outcome)  # closes a turn or vote left open, then DebateCompleted
        return await self.wait()

    async def _close_loose_ends(self) -> None:
        """A stop or failure can leave a turn or a vote open; close them so front ends can too."""
        turn = self.state.open_turn
        if turn is not None:
            await self.emit(
                TurnCompleted(
                    turn_id=turn.turn_id,
                    speaker=turn.speaker,
                    role=turn.role,
                    round=turn.round,
                    text=(turn.partial.strip() + " …").strip(),
                    interrupted=True,
                )
            )
        ballot = self.state.open_ballot
        if ballot is not None:
            self.ballots.close(ballot.vote_id)
            tally: dict[str, float] = {o.key: 0 for o in ballot.options}
            for vote in ballot.ai_votes.values():
                tally[vote.choice] = tally.get(vote.choice, 0) + 1
            await self.emit(
                VotingClosed(
                    vote_id=ballot.vote_id,
                    tally=tally,
                    human_tally=ballot.human_tally(),
                    decision="none",
                    decision_label="Vote cancelled: the debate ended",
                )
            )

    async def _finish(self, outcome: Outcome) -> None:
        result = DebateResult(self.debate_id, outcome.reason, outcome.detail, outcome.summary, Statistics())
        try:
            if outcome.reason in ("stopped", "failed", "interrupted", "budget"):
                await self._close_loose_ends()
            self.debate_clock.pause()
            stats = self.state.statistics(
                debate_seconds=self.debate_clock.elapsed, paused_seconds=self.debate_clock.paused_total
            )
            summary = outcome.summary or _plain_summary(outcome, stats)
            await self.emit(
                DebateCompleted(reason=outcome.reason, detail=outcome.detail, stats=stats, summary=summary)
            )
            result = DebateResult(self.debate_id, outcome.reason, outcome.detail, summary, stats)
            status = STATUS_OF_REASON[outcome.reason]
            await self._stored(lambda: self._store.set_status(self.debate_id, status, outcome.detail))
        except Exception:
            log.exception("debate %s: could not record its end", self.debate_id)
        finally:
            if not self._result.done():
                self._result.set_result(result)

    async def _interrupted(self) -> None:
        try:
            if not self._lease_lost:
                await self._store.set_status(self.debate_id, "interrupted", "the bot shut down mid-debate")
        except Exception:
            log.exception("debate %s: could not mark it interrupted", self.debate_id)
        if not self._result.done():
            self._result.set_result(
                DebateResult(self.debate_id, "interrupted", "the bot shut down mid-debate", "", Statistics())
            )

    # --- what front ends ask ---------------------------------------------------------------------

    def status(self) -> DebateStatusView:
        s = self.state
        speaker = (
            s.open_turn.speaker.name if s.open_turn else (s.active_speaker.name if s.active_speaker else None)
        )
        return DebateStatusView(
            debate_id=self.debate_id,
            format=s.format or self.spec.format,
            topic=self.spec.topic,
            phase=s.phase,
            round=s.round,
            speaker=speaker,
            elapsed=self.debate_clock.elapsed,
            remaining=self.debate_clock.remaining,
            turns=len(s.turns),
        )


def real_error(exc: BaseException) -> BaseException:
    """The error that matters inside task groups' ExceptionGroups (a resume mismatch, a store fault)."""
    if not isinstance(exc, BaseExceptionGroup):
        return exc
    leaves: list[BaseException] = []

    def walk(group: BaseExceptionGroup[BaseException]) -> None:
        for inner in group.exceptions:
            if isinstance(inner, BaseExceptionGroup):
                walk(inner)
            else:
                leaves.append(inner)

    walk(exc)
    for wanted in (ResumeMismatch, LeaseLost, StoreGaveUp, StoreError, BudgetExhausted):
        for leaf in leaves:
            if isinstance(leaf, wanted):
                return leaf
    return leaves[0] if leaves else exc


def _plain_summary(outcome: Outcome, stats: Statistics) -> str:
    ending = {
        "stopped": "The debate was stopped",
        "failed": "The debate ended on an error",
    }.get(outcome.reason, "The debate ended")
    detail = f" ({outcome.detail})" if outcome.detail else ""
    return (
        f"{ending}{detail} after {plural(stats.turns, 'turn')} over {plural(stats.rounds, 'round')},"
        f" with {plural(stats.switches, 'speaker switch')}."
    )


class DebateHandle:
    """What a front end holds while a debate runs: votes and stop in, result out."""

    def __init__(self, session: DebateSession) -> None:
        self._session = session

    @property
    def debate_id(self) -> str:
        return self._session.debate_id

    @property
    def spec(self) -> DebateSpec:
        return self._session.spec

    @property
    def binding(self) -> Binding:
        return self._session.binding

    @property
    def state(self) -> DebateState:
        return self._session.state

    @property
    def done(self) -> bool:
        return self._session.done

    async def cast_human_vote(
        self, vote_id: str, voter_id: str, choice: str, *, voter_name: str | None = None
    ) -> None:
        """Record a person's vote (a newer one replaces theirs). Raises BallotError when refused."""
        if self.done:
            raise BallotClosedError("The debate has ended.")
        await self._session.ballots.cast(vote_id, voter_id, choice, voter_name)

    async def withdraw_human_vote(self, vote_id: str, voter_id: str) -> None:
        if self.done:
            raise BallotClosedError("The debate has ended.")
        await self._session.ballots.withdraw(vote_id, voter_id)

    def vote_card_shown(self, vote_id: str, shown: bool = True) -> None:
        """The front end's report: the vote card and its ballot are visible (or cannot be shown).
        The people's window opens from then (sinks with `reports_cards_shown = True`)."""
        cards = self._session.ballots.cards
        if cards is not None:
            cards.report(vote_id, shown)

    def human_vote_open(self, vote_id: str) -> bool:
        return not self.done and self._session.ballots.is_open(vote_id)

    async def stop(self, reason: str = "stopped") -> None:
        """Ask the debate to end now; it closes with its statistics. `wait()` for the result."""
        self._session.request_stop(reason)

    async def wait(self) -> DebateResult:
        return await self._session.wait()

    def status(self) -> DebateStatusView:
        return self._session.status()

    def events_so_far(self) -> int:
        return self._session.state.last_seq
