"""One running debate: its task, stop and shutdown, and the error funnel.

Whatever happens inside the format, a `DebateCompleted` is emitted and the stored status is
updated; when the store or the lease stops the debate, it stays resumable. The session wires its
collaborators together: the emit path (`emit`), the replay (`replaying`), the store's faults
(`outage`), the notices it owes (`notices`) and the people's ballots (`core.voting`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from pydantic import BaseModel

from core.budget import BudgetExhausted
from core.clock import Clock, DebateClock
from core.errors import LeaseLost, ModelOutage, StoreError, StoreGaveUp
from core.events import DebateCompleted, E, Notice
from core.formats.base import DebateContext, DebateFormat, Outcome
from core.llm.registry import DebateModels
from core.models import Statistics
from core.ports import Binding, EventSink, Store
from core.relayed_votes import CardsReader, ReactionTaker, RelayedReaction, RelayedVote
from core.replay import Replay, ResumeMismatch
from core.session import notices
from core.session.emit import EventPath
from core.session.ending import LEAVES_LOOSE_ENDS, STATUS_OF_REASON, close_loose_ends, plain_summary
from core.session.model_watch import ModelWatch, told_waiting
from core.session.notices import PendingNotices
from core.session.outage import StoreGuard
from core.session.platform import PlatformGate
from core.session.relayed import WindowClock
from core.session.replaying import CatchUp
from core.session.results import DebateResult, DebateStatusView
from core.settings import CoreSettings
from core.spec import DebateSpec
from core.state import DebateState
from core.voting import CardsShown, HumanBallots

log = logging.getLogger(__name__)

SHUT_DOWN = "the bot shut down mid-debate"
TAKEN_OVER = "another Rostra process took this debate over"


class DebateSession:
    """One debate's run, from its first event to its stored end (or to a resumable stop)."""

    def __init__(
        self,
        *,
        debate_id: str,
        spec: DebateSpec,
        binding: Binding,
        format_cls: type[DebateFormat] | None,
        options: BaseModel | None,
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
        self._stop_reason: str | None = None
        self._inner: asyncio.Task[Outcome] | None = None
        self._task: asyncio.Task[None] | None = None
        self._result: asyncio.Future[DebateResult] = asyncio.get_running_loop().create_future()
        # None only for a stored debate that is closed without running (its format is gone)
        runs = format_cls if options is not None else None
        self.debate_clock = DebateClock(
            clock, runs.duration(options) if runs and options is not None else None
        )
        self._notices = PendingNotices(resume_notice)  # the resume notice: once the replay caught up
        self._guard = StoreGuard(
            debate_id, settings.storage, self.debate_clock, self._notices, self._stop_format
        )
        self.platform = PlatformGate(debate_id, self.debate_clock, self._guard.give_up)
        store.when_taken(debate_id, self._guard.lose_lease)  # found by the heartbeat: stop at once
        self._catch_up = CatchUp(debate_id, replay, self.state, self.debate_clock)
        self._emit = EventPath(
            debate_id,
            store=store,
            sink=sink,
            state=self.state,
            clock=self.debate_clock,
            catch_up=self._catch_up,
            guard=self._guard,
            notices=self._notices,
            platform=self.platform,
        )
        platform = self.platform
        cards = CardsShown(lambda: platform.down) if getattr(sink, "reports_cards_shown", False) else None
        self._reactions: ReactionTaker | None = getattr(sink, "relayed_reaction", None)
        self._cards_reader: CardsReader | None = getattr(sink, "read_cards_again", None)
        resume = self._catch_up if replay is not None else None
        self.window_clock = WindowClock(clock)  # takes the votes relayed through the store at a close
        last_look = getattr(sink, "read_card_at_close", None)  # a front end whose events may be late
        self.ballots = HumanBallots(self._emit, self.state, self.window_clock, resume, cards, last_look)
        self.ctx = DebateContext(
            debate_id=debate_id,
            topic=spec.topic,
            seed=seed,
            settings=settings,
            models=models,
            clock=clock,
            debate_clock=self.debate_clock,
            state=self.state,
            emit=self._emit,
            ballots=self.ballots,
            replay=replay,
        )
        told = replay is not None and told_waiting(replay.events)  # taken over mid-outage
        self.models_down = ModelWatch(  # providers waited out; no call once the debate is another's
            clock, self.debate_clock, self._emit, still_ours=self.still_ours, told=told
        )
        models.watch_outages(self.models_down)
        self.format = runs(self.ctx, options) if runs is not None and options is not None else None

    async def emit(self, event: E) -> E:
        """Stamp `event`, store it, apply it to the state, then hand it to the sink (see `emit`)."""
        return await self._emit(event)

    async def record_call(self, key: str, n: int, payload: str) -> None:
        """Remember a model call's result (waits out store faults like an event does)."""
        await self._guard.write(lambda: self._store.record_call(self.debate_id, key, n, payload))

    @property
    def store_failure(self) -> str | None:
        """Why the store stopped this debate (it stays resumable), if it did."""
        return self._guard.failure

    async def still_ours(self) -> bool:
        """The debate is still this process's (the store's lease fence); if not, it stops, as on a
        write the fence refused. Asked before a model call, a person's vote or a Stop taken here: a
        process woken from a pause past its lease may not have written (and so learnt) anything yet."""
        if await self._store.still_held(self.debate_id):
            return True
        self._guard.lose_lease()
        return False

    async def passed_on(self, left: RelayedVote | RelayedReaction) -> bool:
        """A person's vote (or reaction on a card) that reached this process after another took the
        debate over: left in the store for the new owner, as one made through any other process is
        (True); False while the debate is this process's."""
        if await self.still_ours():
            return False
        await self._store.post_vote(self.debate_id, left.payload())
        return True

    async def take_reaction(self, reaction: RelayedReaction) -> None:
        """A reaction on one of its cards made through another process (`core.relayed_votes`): to the
        front end's card ballot (nothing, for a front end without vote cards)."""
        if self._reactions is not None:
            await self._reactions(reaction)

    async def read_cards_again(self) -> None:
        """Another process may have missed reactions on its cards (`core.relayed_votes.CardsToRead`):
        the front end reads its open cards again (nothing, for a front end without vote cards)."""
        if self._cards_reader is not None:
            await self._cards_reader()

    def _stop_format(self) -> None:
        """Cancel the format's task, unless that is the one asking (it is stopping anyway)."""
        if self._inner is not None and self._inner is not asyncio.current_task():
            self._inner.cancel()

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"debate-{self.debate_id}")

    @property
    def done(self) -> bool:
        return self._result.done()

    @property
    def catching_up(self) -> bool:
        """A resumed debate still replaying its stored log (people's votes are refused until it is live)."""
        return self._catch_up.replaying

    def on_done(self, callback: Callable[[DebateResult], None]) -> None:
        self._result.add_done_callback(lambda ended: callback(ended.result()))

    async def wait(self) -> DebateResult:
        return await asyncio.shield(self._result)

    def request_stop(self, reason: str) -> None:
        if self._stop_reason is None and not self.done:
            self._stop_reason = reason
            if self._inner is not None:
                self._inner.cancel()

    async def cancel(self) -> None:
        """Shutdown: stop the task without closing the debate (it stays resumable)."""
        self._guard.single_try = True  # a write waiting out a store outage gives up now, not at the limit
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
                if self._guard.stopped:
                    await self._end_without_store()
                    return
                if self._stop_reason is None:
                    raise
                self._catch_up.finish()  # stopped while catching up: the rest of the log is the state
                outcome = Outcome("stopped", detail=self._stop_reason)
        except asyncio.CancelledError:
            await self._interrupted()
            await self.ctx.models.aclose()
            raise
        except Exception as raised:
            exc = real_error(raised)
            resting = isinstance(exc, ModelOutage) and exc.resumable  # unavailable past the limit
            if resting:
                self.models_down.gave_up(str(exc))
            if self._guard.stopped or resting or isinstance(exc, StoreGaveUp | LeaseLost):
                if isinstance(exc, StoreGaveUp | ModelOutage) and self._guard.failure is None:
                    self._guard.failure = str(exc)
                await self._end_without_store()
                return
            self._catch_up.finish()  # what follows is new, whatever happened
            outcome = await self._failed(exc)
        finishing = asyncio.ensure_future(self._finish(outcome))
        try:
            await asyncio.shield(finishing)  # a shutdown now must not leave a finished debate "running"
        except asyncio.CancelledError:
            await asyncio.wait([finishing])
            raise
        finally:
            await self.ctx.models.aclose()

    async def _failed(self, exc: BaseException) -> Outcome:
        """The format raised: how the debate ends, the thread told why (a budget needs no notice)."""
        if isinstance(exc, BudgetExhausted):  # raised inside a task group (parallel calls)
            log.info("debate %s: %s", self.debate_id, exc)
            return Outcome("budget", detail=self.ctx.budget_note())
        if isinstance(exc, ModelOutage):  # the model is down for this debate: no more fallbacks
            log.info("debate %s ends: %s", self.debate_id, exc.reason)
            outcome = Outcome("failed", detail=exc.reason)
            notice = notices.model_down(exc.reason)
        elif isinstance(exc, ResumeMismatch):
            log.warning("debate %s cannot be resumed: %s", self.debate_id, exc)
            outcome = Outcome("failed", detail=f"could not be resumed: {exc}")
            notice = notices.cannot_resume(exc)
        else:
            log.exception("debate %s failed", self.debate_id)
            outcome = Outcome("failed", detail=f"{type(exc).__name__}: {exc}")
            notice = notices.failed(exc)
        try:
            await self.emit(notice)
        except Exception:
            log.exception("debate %s: could not record the failure notice", self.debate_id)
        return outcome

    async def _end_without_store(self) -> None:
        """The store stayed unavailable, or the lease is gone: stop, resumable, writing what we can.

        With the store down, the notice and the status are each tried once (they land if it is back);
        the debate stays `running` or `interrupted` in the log either way, and is resumed (with the
        notice) once the store takes writes again. Without the lease nothing is written at all.
        """
        guard = self._guard
        try:
            if guard.lease_lost:
                detail = TAKEN_OVER
            else:
                detail = f"interrupted: {guard.failure}"
                guard.single_try = True
                try:
                    failure = str(guard.failure)
                    if self.platform.failure is not None:
                        notice = notices.platform_stopped(failure)
                    elif self.models_down.failure is not None:
                        notice = notices.model_stopped(failure)
                    else:
                        notice = notices.store_stopped(failure)
                    await self.emit(notice)
                    await guard.write(lambda: self._store.set_status(self.debate_id, "interrupted", detail))
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
        self._catch_up.finish()
        try:
            await self.emit(notice)
        except Exception:
            log.exception("debate %s: could not record why it closed", self.debate_id)
        await self._finish(outcome)  # closes a turn or vote left open, then DebateCompleted
        return await self.wait()

    async def _finish(self, outcome: Outcome) -> None:
        result = DebateResult(self.debate_id, outcome.reason, outcome.detail, outcome.summary, Statistics())
        try:
            if outcome.reason in LEAVES_LOOSE_ENDS:
                await close_loose_ends(self.state, self.ballots, self._emit)
            self.debate_clock.pause()
            stats = self.state.statistics(
                debate_seconds=self.debate_clock.elapsed, paused_seconds=self.debate_clock.paused_total
            )
            summary = outcome.summary or plain_summary(outcome, stats)
            await self.emit(
                DebateCompleted(reason=outcome.reason, detail=outcome.detail, stats=stats, summary=summary)
            )
            result = DebateResult(self.debate_id, outcome.reason, outcome.detail, summary, stats)
            status = STATUS_OF_REASON[outcome.reason]
            await self._guard.write(lambda: self._store.set_status(self.debate_id, status, outcome.detail))
        except Exception:
            log.exception("debate %s: could not record its end", self.debate_id)
        finally:
            if not self._result.done():
                self._result.set_result(result)

    async def _interrupted(self) -> None:
        try:
            if not self._guard.lease_lost:
                await self._store.set_status(self.debate_id, "interrupted", SHUT_DOWN)
        except Exception:
            log.exception("debate %s: could not mark it interrupted", self.debate_id)
        if not self._result.done():
            self._result.set_result(DebateResult(self.debate_id, "interrupted", SHUT_DOWN, "", Statistics()))

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
    for wanted in (ResumeMismatch, LeaseLost, StoreGaveUp, StoreError, ModelOutage, BudgetExhausted):
        for leaf in leaves:
            if isinstance(leaf, wanted):
                return leaf
    return leaves[0] if leaves else exc
