"""The one place that builds everything: store, models, manager, recovery; `async with Runtime(config)`.

Only wiring: what the engine does with them (resuming, failover) is core's (core.recovery)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType
from typing import TYPE_CHECKING

from adapters.delivery import shares
from bot.config import Config, Secrets, load_secrets
from bot.operations import Operations
from core.admission import Admission
from core.clock import Clock, RealClock
from core.errors import StoreError
from core.llm.registry import ModelRegistry
from core.llm.scripted import Script
from core.manager import DebateManager
from core.models import Persona
from core.ports import Binding, BindingValues, ChannelClaim, EventSink, Store
from core.prepare import PreparedDebate, prepare_debate
from core.recovery import Adopted, Attach, Recovery
from core.session import DebateHandle
from core.settings import CoreSettings
from core.spec import DebateSpec
from core.spending import seed_from_store
from core.storage import open_store
from core.workers import BudgetShare

log = logging.getLogger(__name__)


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
        self._recovery: Recovery | None = None
        self.operations: Operations | None = None
        self._counting: asyncio.Task[None] | None = None
        self.share: BudgetShare | None = None
        """This worker's share of its platform's bot-wide rate budgets (`join_workers`)."""

    async def __aenter__(self) -> Runtime:
        """Open the store (StoreError, one clear line, when it cannot be used) and the manager; if
        anything after the store fails, everything opened is closed again before the error goes on
        (a store left open would keep the process from ending)."""
        self._store = await open_store(self.config.storage.url, self.core.storage)
        try:
            await self._open_rest(self._store)
        except BaseException:
            await self.aclose()
            raise
        return self

    async def _open_rest(self, store: Store) -> None:
        self._manager = DebateManager(settings=self.core, store=store, models=self.models, clock=self.clock)
        self._admission = Admission(self._manager, self.clock, self.core.limits)
        self._recovery = Recovery(
            self._manager, resume=self.config.resume, heartbeat_seconds=self.core.storage.heartbeat_seconds
        )
        await seed_from_store(self._manager.spending, store)  # today's spend survives a restart
        self.operations = Operations(self.config, manager=self._manager, models=self.models, store=store)
        await self.operations.start()  # metrics, health, traces (issue 13)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._counting is not None:
            self._counting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._counting
            self._counting = None
        if self.share is not None:
            shares.forget(self.share.role)
            self.share = None
        if self._recovery is not None:
            await self._recovery.aclose()
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

    @property
    def recovery(self) -> Recovery:
        """Resuming cut-short debates and the failover between processes (core.recovery)."""
        if self._recovery is None:
            raise RuntimeError("the runtime is not open: use `async with Runtime(config) as rt`")
        return self._recovery

    async def resume_debates(
        self, platform: str, attach: Attach, *, adopted: Adopted | None = None
    ) -> list[DebateHandle]:
        """`self.recovery.resume_debates` (see there), for the terminal and the tests."""
        return await self.recovery.resume_debates(platform, attach, adopted=adopted)

    def enable_failover(self) -> None:
        """Run as one of many processes (the bot processes do; tests that need it may): take over
        debates whose owner died, and apply the votes other processes leave for debates run here."""
        self.recovery.enable_failover()

    async def join_workers(self, role: str) -> BudgetShare:
        """Count this process among the live workers of `role` (a platform's bot processes) and keep
        its share of the platform's bot-wide rate budgets current, every heartbeat (core.workers)."""
        share = BudgetShare(self.store, role, every=self.core.storage.heartbeat_seconds)
        try:
            await share.refresh()
        except StoreError as exc:  # counted again at the next heartbeat
            log.warning("could not join the %s workers yet: %s", role, exc)
        self._counting = asyncio.create_task(share.run(), name=f"{role}-workers")
        self.share = share
        shares.register(role, share)  # the rate windows of bot-wide budgets read it (adapters.delivery)
        return share

    async def start_debate(
        self,
        spec: DebateSpec,
        sink: EventSink,
        *,
        binding: Binding | None = None,
        seed: int | None = None,
        claim: ChannelClaim | None = None,
        values: BindingValues | None = None,
    ) -> DebateHandle:
        return await self.manager.start(spec, sink, binding=binding, seed=seed, claim=claim, values=values)


if TYPE_CHECKING:
    from adapters.host import Host

    def _runtime_is_a_host(rt: Runtime) -> Host:  # mypy checks the protocol is satisfied
        return rt
