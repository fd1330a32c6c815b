"""Operating a running Rostra: metrics, traces and health, plugged into the engine's observer seams."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from bot.health import Health
from bot.metrics import Metrics
from bot.ops_server import OpsServer
from core.observe import platforms

if TYPE_CHECKING:
    from bot.config import Config
    from bot.tracing import Tracing
    from core.llm.registry import ModelRegistry
    from core.manager import DebateManager
    from core.ports import Store

log = logging.getLogger(__name__)
T = TypeVar("T")


class Operations:
    """Owns the metrics, the health checks, the tracer and the HTTP endpoint of one process."""

    def __init__(
        self, config: Config, *, manager: DebateManager, models: ModelRegistry, store: Store
    ) -> None:
        self.metrics = Metrics(running=lambda: [h.spec.format for h in manager.running()])
        self.health = Health(store)
        self.server: OpsServer | None = None
        self.tracing: Tracing | None = None
        self._detach: list[Callable[[], None]] = []
        if config.metrics.port is not None:
            self._attach(manager.observers, self.metrics)
            self._attach(models.observers, self.metrics)
            self._attach(platforms.observers, self.metrics)
            self.server = OpsServer(
                self.metrics, self.health, host=config.metrics.host, port=config.metrics.port
            )
        if config.tracing.enabled:
            from bot.tracing import Tracing

            try:
                self.tracing = Tracing.from_settings(config.tracing)
            except RuntimeError as exc:  # the exporter is not installed: run untraced, say why
                log.error("tracing is off: %s", exc)
            else:
                self._attach(manager.observers, self.tracing)
                self._attach(models.observers, self.tracing)
                self._attach(platforms.observers, self.tracing)

    def _attach(self, observers: list[T], observer: T) -> None:
        observers.append(observer)

        def detach() -> None:
            if observer in observers:
                observers.remove(observer)

        self._detach.append(detach)

    async def start(self) -> None:
        if self.server is not None:
            try:
                await self.server.start()
            except OSError as exc:  # the port is taken: run without the endpoint, say so
                log.error("metrics and health endpoint not started on port %s: %s", self.server.port, exc)
                self.server = None

    async def aclose(self) -> None:
        for detach in self._detach:
            detach()
        self._detach.clear()
        if self.server is not None:
            await self.server.aclose()
            self.server = None
        if self.tracing is not None:
            self.tracing.shutdown()


def watch_platform(rt: object, name: str, connected: Callable[[], bool]) -> None:
    """A front end's main loop says how to tell it is connected (for `/readyz`)."""
    operations = getattr(rt, "operations", None)
    if isinstance(operations, Operations):
        operations.health.add_platform(name, connected)
