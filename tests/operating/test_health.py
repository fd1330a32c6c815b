"""`/healthz` and `/readyz` on the metrics port: the store must be writable, the platform connected."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import aiohttp

from bot.runtime import Runtime
from core.clock import FakeClock
from tests.helpers import make_config


async def get(rt: Runtime, path: str) -> tuple[int, Any]:
    assert rt.operations is not None and rt.operations.server is not None
    url = f"http://127.0.0.1:{rt.operations.server.port}{path}"
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.json()


async def test_healthz_reports_an_unwritable_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = make_config(tmp_path, storage={"url": f"sqlite:///{data / 'rostra.db'}"}, metrics={"port": 0})
    async with Runtime(config, clock=FakeClock()) as rt:
        status, body = await get(rt, "/healthz")
        assert status == 200
        assert body == {"status": "ok", "checks": {"store": {"ok": True, "detail": "writable"}}}

        shutil.rmtree(data)  # the volume went away under the running process
        data.write_text("not a directory")

        status, body = await get(rt, "/healthz")
        assert status == 503 and body["status"] == "failing"
        store = body["checks"]["store"]
        assert store["ok"] is False and "rostra.db" in store["detail"]


async def test_readyz_also_needs_the_platform_connected(tmp_path: Path) -> None:
    connected = False
    config = make_config(tmp_path, metrics={"port": 0})
    async with Runtime(config, clock=FakeClock()) as rt:
        assert rt.operations is not None
        rt.operations.health.add_platform("discord", lambda: connected)
        status, body = await get(rt, "/readyz")
        assert status == 503
        assert body["checks"] == {
            "store": {"ok": True, "detail": "writable"},
            "discord": {"ok": False, "detail": "not connected"},
        }
        assert (await get(rt, "/healthz"))[0] == 200  # alive, just not ready
        connected = True
        assert (await get(rt, "/readyz"))[0] == 200


async def test_without_a_port_nothing_listens(tmp_path: Path) -> None:
    async with Runtime(make_config(tmp_path), clock=FakeClock()) as rt:
        assert rt.operations is not None and rt.operations.server is None


async def test_the_metrics_port_listens_on_loopback_unless_opened(tmp_path: Path) -> None:
    async with Runtime(make_config(tmp_path, metrics={"port": 0}), clock=FakeClock()) as rt:
        assert rt.operations is not None and rt.operations.server is not None
        assert rt.operations.server.hosts == ["127.0.0.1"]
        assert (await get(rt, "/healthz"))[0] == 200
    opened = make_config(tmp_path, metrics={"port": 0, "host": "0.0.0.0"})
    async with Runtime(opened, clock=FakeClock()) as rt:
        assert rt.operations is not None and rt.operations.server is not None
        assert rt.operations.server.hosts == ["0.0.0.0"]
