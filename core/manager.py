"""Starts debates, owns their tasks, and finds them again (by id or by channel)."""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel

from core.clock import Clock
from core.errors import AdmissionError, DebateError, SpecError
from core.events import CompletionReason, DebateCompleted, Event, Notice
from core.formats import FORMATS, DebateFormat, Outcome
from core.llm.memo import CallMemo
from core.llm.registry import ModelRegistry
from core.observe import DebateTags, EventObserver, ObservedSink
from core.ports import Binding, DebateRecord, EventSink, Store
from core.replay import Replay
from core.session import STATUS_OF_REASON, DebateHandle, DebateSession
from core.settings import CoreSettings
from core.spec import DebateSpec, clean_topic
from core.spending import SpendLedger

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreparedDebate:
    """A request that passed every check: its cleaned spec, format and parsed options."""

    spec: DebateSpec
    format_cls: type[DebateFormat]
    options: BaseModel


class CannotResume(DebateError):
    """A stored debate cannot continue here (its format or options no longer fit)."""


class AlreadyEnded(CannotResume):
    """Its closing event is stored (only its status was lost, in a crash at that moment): fixed."""


def new_debate_id() -> str:
    return secrets.token_hex(4)


def prepare_debate(
    spec: DebateSpec,
    settings: CoreSettings,
    models: ModelRegistry,
    formats: Mapping[str, type[DebateFormat]] = FORMATS,
) -> PreparedDebate:
    """Check a request (format, topic, options, models) without starting anything.

    Raises SpecError (bad request) or ModelConfigError (a model that cannot be used).
    """
    fmt = (spec.format or "arena").strip().lower()
    format_cls = formats.get(fmt)
    if format_cls is None:
        raise SpecError(f"Unknown format {spec.format!r}. Choose one of: {', '.join(formats)}.")
    topic = clean_topic(spec.topic, max_length=settings.limits.max_topic_length)
    options = format_cls.parse_options(settings, dict(spec.options))
    models.check_roles(format_cls.roles())
    if format_cls.uses_research(settings):
        models.check_research()
    return PreparedDebate(DebateSpec(fmt, topic, dict(spec.options)), format_cls, options)


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
        # Operations (issue 13): the daily spend ledger and whatever else watches the events.
        self.spending = SpendLedger(settings.limits)
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
    ) -> DebateSession:
        async def remember(key: str, n: int, payload: str) -> None:
            await self.store.record_call(debate_id, key, n, payload)

        memo = CallMemo(recorded_calls, record=remember)
        return DebateSession(
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
        )

    def _run(self, session: DebateSession) -> DebateHandle:
        self._sessions[session.debate_id] = session
        session.start()
        session.on_done(lambda: self._forget(session.debate_id))
        return DebateHandle(session)

    def _stored_session(
        self,
        record: DebateRecord,
        format_cls: type[DebateFormat] | None,
        options: BaseModel | None,
        sink: EventSink,
        events: list[Event],
        recorded_calls: dict[tuple[str, int], str] | None = None,
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
        )

    async def resume(self, record: DebateRecord, sink: EventSink) -> DebateHandle:
        """Continue a stored debate from its event log (see core.replay).

        Raises CannotResume when its format or options no longer fit this Rostra's code or config.
        """
        if record.id in self._sessions:
            raise CannotResume("it is already running")
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
        session = self._stored_session(
            record, format_cls, options, sink, events, recorded_calls=await self.store.calls(record.id)
        )
        await self.store.set_status(record.id, "running", "resumed after a restart")
        log.info("debate %s resumed from %d stored events", record.id, len(events))
        return self._run(session)

    async def close_stored(
        self, record: DebateRecord, sink: EventSink, *, reason: CompletionReason, message: str
    ) -> None:
        """End a stored debate without running it: a notice saying why, then its closing event."""
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
    ) -> DebateHandle:
        prepared = self.prepare(spec)
        if len(self._sessions) >= self.settings.limits.max_concurrent_debates:
            raise AdmissionError("Too many debates are running right now; try again when one ends.")
        debate_id = new_debate_id()
        seed = seed if seed is not None else random.SystemRandom().randrange(1, 2**31)
        binding = binding or Binding()
        self.spending.check(platform=binding.platform, scope=binding.scope)  # daily budgets (money)
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
            )
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

    def _forget(self, debate_id: str) -> None:
        self._sessions.pop(debate_id, None)

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
