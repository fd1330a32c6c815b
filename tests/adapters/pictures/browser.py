"""A real headless Chromium driven over the DevTools protocol: what a page logs, fetches and shows.

Debian's `chromium` (installed by `.ci/run` when missing). Without it the browser tests are skipped
with that reason, except under CI=true, where a missing browser is an error.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        reason = "Debian's chromium is not installed (.ci/run installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@dataclass
class Tab:
    """One page target: send commands, keep every event it reports."""

    ws: aiohttp.ClientWebSocketResponse
    events: list[dict[str, Any]] = field(default_factory=list)
    _pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _next: int = 0
    _loaded: asyncio.Event = field(default_factory=asyncio.Event)

    async def read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
            else:
                self.events.append(data)
                if data.get("method") == "Page.loadEventFired":
                    self._loaded.set()

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        await self.ws.send_str(json.dumps({"id": self._next, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, 30)
        assert "error" not in reply, reply
        result: dict[str, Any] = reply.get("result", {})
        return result

    async def open(self, url: str) -> None:
        for domain in ("Page", "Runtime", "Log", "Network"):
            await self.send(f"{domain}.enable")
        self._loaded.clear()
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(self._loaded.wait(), 30)
        await asyncio.sleep(0.2)  # anything the page would still fetch or log after load

    async def value(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    async def width(self, width: int, height: int, *, phone: bool) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=phone,
        )
        await asyncio.sleep(0.1)

    async def screenshot(self) -> bytes:
        shot = await self.send("Page.captureScreenshot", format="png")
        return base64.b64decode(shot["data"])

    def console_errors(self) -> list[dict[str, Any]]:
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            error = (
                method == "Runtime.exceptionThrown"
                or (
                    method == "Runtime.consoleAPICalled"
                    and params.get("type") in ("error", "warning", "assert")
                )
                or (
                    method == "Log.entryAdded"
                    and params.get("entry", {}).get("level") in ("error", "warning")
                )
            )
            if error:
                found.append(params)
        return found

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]


@contextlib.asynccontextmanager
async def headless_chromium() -> AsyncIterator[Tab]:
    binary = chromium()
    with tempfile.TemporaryDirectory(prefix="rostra-chromium-") as profile:
        proc = await asyncio.create_subprocess_exec(
            binary,
            *FLAGS,
            f"--user-data-dir={profile}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stderr is not None
        drain: asyncio.Task[None] | None = None
        try:
            endpoint = None
            while endpoint is None:
                line = await asyncio.wait_for(proc.stderr.readline(), 30)
                if not line:
                    raise RuntimeError("chromium exited before it listened")
                found = re.search(rb"DevTools listening on ws://([\d.]+:\d+)/", line)
                endpoint = found.group(1).decode() if found else None

            async def drain_stderr() -> None:
                assert proc.stderr is not None
                while await proc.stderr.readline():
                    pass

            drain = asyncio.create_task(drain_stderr())
            async with aiohttp.ClientSession() as http:
                async with http.get(f"http://{endpoint}/json/list") as listing:
                    targets = await listing.json()
                page = next(t for t in targets if t["type"] == "page")
                async with http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                    tab = Tab(ws)
                    reader = asyncio.create_task(tab.read())
                    try:
                        yield tab
                    finally:
                        reader.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await reader
        finally:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
            if drain is not None:
                drain.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await drain


def file_url(path: Path) -> str:
    return path.resolve().as_uri()
