"""discord.py's own retry waits, shortened for tests against the loopback REST fake
(testkit/discord_world.py)."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import discord
import pytest


def compress_discord_py_waits(monkeypatch: pytest.MonkeyPatch, factor: float = 0.02) -> None:
    """discord.py's own waits between retries (1, 3, 5, 7 s after a 5xx) shortened by `factor`, so a
    test of a persistent 5xx runs in well under a second per call; the retry logic itself is real."""
    real_sleep = asyncio.sleep

    async def sleep(delay: float, result: Any = None) -> Any:
        return await real_sleep(delay * factor, result)

    fast = types.SimpleNamespace(
        **{name: getattr(asyncio, name) for name in dir(asyncio) if not name.startswith("__")}
    )
    fast.sleep = sleep
    monkeypatch.setattr(discord.http, "asyncio", fast)
    monkeypatch.setattr(discord.webhook.async_, "asyncio", fast)
