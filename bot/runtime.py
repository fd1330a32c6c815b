"""The one place that builds everything: store, models, manager; `async with Runtime(config)`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING

from bot.config import Config, Secrets, load_secrets
from bot.operations import Operations
from core.admission import Admission
from core.clock import Clock, RealClock
from core.events import Event
from core.llm.registry import ModelRegistry
from core.llm.scripted import Script
from core.manager import AlreadyEnded, CannotResume, DebateManager, PreparedDebate, prepare_debate
from core.models import Persona
from core.ports import Binding, DebateRecord, EventSink
from core.session import DebateHandle
from core.settings import CoreSettings
from core.spec import DebateSpec
from core.spending import seed_from_store
from core.storage.sqlite import SQLiteStore, open_store

log = logging.getLogger(__name__)


class _Nowhere:
    """The sink of a debate whose channel is gone: its closing events are only stored."""

    async def emit(self, event: Event) -> None:
        return None


class Runtime:
    """Owns the store, the model registry and the debate manager for one process."""

    def __init__(
        self,
        config: Config,
        *,
        clock: Clock | None = None,
        secrets: Secrets | None = None,
        script: Script | None = None,
    ) -> None:
        self.config = config
        self.core: CoreSettings = config.core()
        self.clock: Clock = clock or RealClock()
        self.secrets = secrets if secrets is not None else load_secrets()
        anthropic = self.secrets.anthropic_api_key
        tavily = self.secrets.tavily_api_key
        self.models = ModelRegistry(
            self.core.model,
            clock=self.clock,
            anthropic_api_key=anthropic.get_secret_value() if anthropic is not None else None,
            tavily_api_key=tavily.get_secret_value() if tavily is not None else None,
            script=script,
        )
        self._store: SQLiteStore | None = None
        self._manager: DebateManager | None = None
        self._admission: Admission | None = None
        self.operations: Operations | None = None

    async def __aenter__(self) -> Runtime:
        self._store = await open_store(self.config.storage.url)
        self._manager = DebateManager(
            settings=self.core, store=self._store, models=self.models, clock=self.clock
        )
        self._admission = Admission(self._manager, self.clock, self.core.limits)
        await seed_from_store(self._manager.spending, self._store)  # today's spend survives a restart
        self.operations = Operations(
            self.config, manager=self._manager, models=self.models, store=self._store
        )
        await self.operations.start()  # metrics, health, traces (issue 13)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._manager is not None:
            await self._manager.aclose()
        if self.operations is not None:
            await self.operations.aclose()
            self.operations = None
        if self._store is not None:
            await self._store.close()
            self._store = None

    @property
    def store(self) -> SQLiteStore:
        if self._store is None:
            raise RuntimeError("the runtime is not open: use `async with Runtime(config) as rt`")
        return self._store

    @property
    def manager(self) -> DebateManager:
        if self._manager is None:
            raise RuntimeError("the runtime is not open: use `async with Runtime(config) as rt`")
        return self._manager

    @property
    def admission(self) -> Admission:
        if self._admission is None:
            raise RuntimeError("the runtime is not open: use `async with Runtime(config) as rt`")
        return self._admission

    @property
    def personas(self) -> dict[str, Persona]:
        return self.core.personas

    def prepare(self, spec: DebateSpec) -> PreparedDebate:
        """Check a request (topic, format, options, models) without starting anything.

        Works before the runtime is opened, so a bad request never touches the store.
        """
        return prepare_debate(spec, self.core, self.models)

    async def resume_debates(
        self, platform: str, attach: Callable[[DebateRecord, dict[str, str]], Awaitable[EventSink | None]]
    ) -> list[DebateHandle]:
        """Pick up this platform's debates that a stop or a crash cut short.

        For each, `attach(record, binding_values)` gives a sink bound to where the debate was shown,
        or None when that place is gone (the debate is then closed with the reason stored); if it
        raises (the platform is briefly unreachable), the debate is left for the next start. With
        `resume: off` the debate is closed with a message instead; one that cannot be replayed
        here (its format or options changed) is closed saying why. The rest continue, live.
        """
        found: list[DebateRecord] = []
        for status in ("running", "interrupted"):
            found += [
                r for r in await self.store.debates_with_status(status) if r.binding.platform == platform
            ]
        handles: list[DebateHandle] = []
        for record in found:
            if self.manager.get(record.id) is not None:
                continue
            try:
                sink = await attach(record, await self.store.binding_values(record.id))
            except Exception:
                log.exception(
                    "debate %s: could not reattach its %s delivery; it stays resumable", record.id, platform
                )
                continue
            if sink is None:
                await self.manager.close_stored(
                    record,
                    _Nowhere(),
                    reason="failed",
                    message="Could not be resumed after a restart: the channel it ran in is gone.",
                )
            elif not self.config.resume:
                await self.manager.close_stored(
                    record,
                    sink,
                    reason="interrupted",
                    message="Rostra restarted and resuming is off here, so this debate ends now.",
                )
            else:
                try:
                    handles.append(await self.manager.resume(record, sink))
                except AlreadyEnded:
                    continue
                except CannotResume as exc:
                    await self.manager.close_stored(
                        record,
                        sink,
                        reason="failed",
                        message=f"This debate could not be resumed after a restart: {exc}.",
                    )
        return handles

    async def start_debate(
        self,
        spec: DebateSpec,
        sink: EventSink,
        *,
        binding: Binding | None = None,
        seed: int | None = None,
    ) -> DebateHandle:
        return await self.manager.start(spec, sink, binding=binding, seed=seed)


if TYPE_CHECKING:
    from adapters.host import Host

    def _runtime_is_a_host(rt: Runtime) -> Host:  # mypy checks the protocol is satisfied
        return rt
