"""The operations HTTP endpoint: `/metrics`, `/healthz`, `/readyz` (aiohttp, on the event loop)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from bot.health import Check, Health
from bot.metrics import Metrics

log = logging.getLogger(__name__)


def _report(checks: dict[str, Check]) -> web.Response:
    ok = all(c.ok for c in checks.values())
    body = {
        "status": "ok" if ok else "failing",
        "checks": {name: {"ok": c.ok, "detail": c.detail} for name, c in checks.items()},
    }
    return web.json_response(body, status=200 if ok else 503)


class OpsServer:
    def __init__(self, metrics: Metrics, health: Health, *, host: str, port: int) -> None:
        self._metrics = metrics
        self._health = health
        self._host = host
        self._port = port
        self._runner: web.AppRunner | None = None
        self.port = port
        self.hosts: list[str] = []
        """The addresses the port is bound on, once started."""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics_page)
        app.router.add_get("/healthz", self._checked(self._health.live))
        app.router.add_get("/readyz", self._checked(self._health.ready))
        return app

    async def _metrics_page(self, request: web.Request) -> web.Response:
        response = web.Response(body=self._metrics.exposition())
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    @staticmethod
    def _checked(
        checks: Callable[[], Awaitable[dict[str, Check]]],
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            return _report(await checks())

        return handler

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await site.start()
        addresses = self._runner.addresses
        self.hosts = sorted({str(address[0]) for address in addresses})
        if addresses:
            self.port = int(addresses[0][1])
        log.info("metrics and health on http://%s:%d (/metrics, /healthz, /readyz)", self._host, self.port)

    async def aclose(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
