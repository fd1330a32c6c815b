"""The one place that builds everything: store, models, manager; `async with Runtime(config)`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING

from bot.config import Config, Secrets, load_secrets
from bot.operations import Operations
from core.admission import Admission
from core.clock import Clock, RealClock
from core.errors import StoreError
from core.events import Event, Notice
from core.llm.registry import ModelRegistry
from core.llm.scripted import Script
from core.manager import (
    AlreadyEnded,
    CannotResume,
    DebateManager,
    LeasedElsewhere,
    PreparedDebate,
    prepare_debate,
)
from core.models import Persona
from core.ports import Binding, DebateRecord, EventSink, Store
from core.session import DebateHandle
from core.settings import CoreSettings
from core.spec import DebateSpec
from core.spending import seed_from_store
from core.storage import open_store

log = logging.getLogger(__name__)

Attach = Callable[[DebateRecord, dict[str, str]], Awaitable[EventSink | None]]
Adopted = Callable[[list[DebateHandle]], Awaitable[None]]

TAKEN_OVER = "The Rostra process running this debate stopped answering; another one takes it over from here."


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
            budgeted=self.core.limits.max_tokens_per_debate > 0 or self.core.limits.max_cost_per_debate > 0,
        )
        self._store: Store | None = None
        self._manager: DebateManager | None = None
        self._admission: Admission | None = None
        self._attached: dict[str, Attach] = {}
        self._adopted: dict[str, Adopted] = {}
        self._resuming = asyncio.Lock()
        self._adopter: asyncio.Task[None] | None = None
        self._failover = False
        self._votes: asyncio.Task[None] | None = None
        self.operations: Operations | None = None

    async def __aenter__(self) -> Runtime:
        """Open the store (StoreError, one clear line, when it cannot be used) and the manager."""
        self._store = await open_store(self.config.storage.url, self.core.storage)
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
        for task in (self._adopter, self._votes):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._adopter = self._votes = None
        if self._manager is not None:
            await self._manager.aclose()
        if self.operations is not None:
            await self.operations.aclose()
            self.operations = None
        if self._store is not None:
            await self._store.close()
            self._store = None

    @property
    def store(self) -> Store:
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
        self, platform: str, attach: Attach, *, adopted: Adopted | None = None
    ) -> list[DebateHandle]:
        """Pick up this platform's debates that a stop, a crash or a dead process cut short.

        For each, `attach(record, binding_values)` gives a sink bound to where the debate was shown,
        or None when that place is gone (the debate is then closed with the reason stored); if it
        raises (the platform is briefly unreachable), the debate is left for the next start. With
        `resume: off` the debate is closed with a message instead; one that cannot be replayed
        here (its format or options changed) is closed saying why. The rest continue, live.

        A debate whose lease a live process holds is left to it. From the first call on, the
        runtime, once `enable_failover()` was called, keeps looking (every `storage.heartbeat_seconds`)
        for this platform's debates whose owner stopped renewing its lease, and takes them over: the
        failover between processes. After each such look, `adopted(handles)` tells the front end
        which debates it took over (those `attach` gave a sink for and that did not resume were
        closed), so it binds them as it binds the ones returned here.
        """
        self._attached[platform] = attach
        if adopted is not None:
            self._adopted[platform] = adopted
        self._start_adopting()
        async with self._resuming:
            return await self._resume(platform, attach)

    def enable_failover(self) -> None:
        """Run as one of many processes (the bot processes do; tests that need it may): take over
        debates whose owner died, and apply the votes other processes leave for debates run here."""
        self._failover = True
        self._start_adopting()
        if self._votes is None and self._manager is not None:
            self._votes = asyncio.create_task(self._manager.deliver_votes_forever(), name="rostra-votes")

    def _start_adopting(self) -> None:
        if self._failover and self._attached and self._adopter is None and self._store is not None:
            self._adopter = asyncio.create_task(self._adopt_forever(), name="rostra-adopt-debates")

    async def _adopt_forever(self) -> None:
        while True:
            await asyncio.sleep(self.core.storage.heartbeat_seconds)
            for platform, attach in list(self._attached.items()):
                try:
                    async with self._resuming:
                        handles = await self._resume(platform, attach)
                        adopted = self._adopted.get(platform)
                        if adopted is not None:
                            await adopted(handles)
                except StoreError as exc:
                    log.warning("could not look for %s debates to take over: %s", platform, exc)
                except Exception:
                    log.exception("could not look for %s debates to take over", platform)

    async def _resume(self, platform: str, attach: Attach) -> list[DebateHandle]:
        store = self.store
        found: list[DebateRecord] = []
        for status in ("running", "interrupted"):
            found += [r for r in await store.debates_with_status(status) if r.binding.platform == platform]
        handles: list[DebateHandle] = []
        for record in found:
            if self.manager.get(record.id) is not None:
                continue
            if record.leased_by_other(store.owner, time.time()):
                log.info("debate %s runs in another process (%s); left to it", record.id, record.owner)
                continue
            try:
                sink = await attach(record, await store.binding_values(record.id))
            except Exception:
                log.exception(
                    "debate %s: could not reattach its %s delivery; it stays resumable", record.id, platform
                )
                continue
            try:
                handle = await self._resume_one(record, sink)
            except LeasedElsewhere as exc:
                log.info("%s", exc)
                continue
            if handle is not None:
                handles.append(handle)
        return handles

    async def _resume_one(self, record: DebateRecord, sink: EventSink | None) -> DebateHandle | None:
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
            taken_over = record.owner not in ("", self.store.owner) and record.status == "running"
            notice = Notice(level="warning", code="taken_over", message=TAKEN_OVER) if taken_over else None
            try:
                return await self.manager.resume(record, sink, notice=notice)
            except AlreadyEnded:
                return None
            except CannotResume as exc:
                await self.manager.close_stored(
                    record,
                    sink,
                    reason="failed",
                    message=f"This debate could not be resumed after a restart: {exc}.",
                )
        return None

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
