"""A dead model is given up on: a refused key ends the debate at once, failure after failure ends it
after `model.failure_limit`; an isolated failure still falls back, and every fallback is counted."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from core.events import DebateCompleted, Notice, TurnCompleted
from core.llm.breaker import KEY_REFUSED, failed_in_a_row, refuses_key
from core.state import word_count
from tests.core.runs import run_debate
from tests.helpers import REPO


class RefusingAnthropic:
    """Anthropic's API as a revoked key meets it: every request answered 401, counted."""

    def __init__(self) -> None:
        self.requests = 0
        self.base_url = ""

    async def answer(self, request: web.Request) -> web.Response:
        self.requests += 1
        error = {"type": "authentication_error", "message": "invalid x-api-key"}
        return web.json_response({"type": "error", "error": error}, status=401)


@pytest.fixture
async def refusing_api() -> AsyncIterator[RefusingAnthropic]:
    api = RefusingAnthropic()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", api.answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    api.base_url = f"http://127.0.0.1:{port}"
    try:
        yield api
    finally:
        await runner.cleanup()


def test_a_refused_key_is_recognised_from_the_providers_message() -> None:
    agno_text = "Error code: 401 - {'type': 'error', 'error': {'type': 'authentication_error'}}"
    assert refuses_key(agno_text)
    assert refuses_key(RuntimeError("invalid x-api-key"))
    assert not refuses_key("Error code: 529 - overloaded")
    assert not refuses_key(TimeoutError("no reply within 120 s"))


async def test_a_bogus_key_ends_the_terminal_demo_at_once_with_the_reason(
    tmp_path: Path, refusing_api: RefusingAnthropic
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(
        ANTHROPIC_API_KEY="sk-bogus",
        ROSTRA_MODEL__ANTHROPIC_BASE_URL=refusing_api.base_url,
        ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}",
        COLUMNS="120",
        AGNO_TELEMETRY="false",
    )
    began = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "demo", "--fast", "x", cwd=REPO, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    took = time.monotonic() - began
    text = out.decode() + err.decode()
    assert proc.returncode == 1, text  # a failed debate exits 1
    assert took < 60, f"took {took:.0f} s"
    assert refusing_api.requests <= 4, refusing_api.requests  # one call (or a few at once), not hundreds
    assert f"failed: {KEY_REFUSED}" in text or KEY_REFUSED in text
    assert "Traceback" not in text
    assert "fallback line" not in text.lower().replace("fallback lines 0", "")
    db = sqlite3.connect(tmp_path / "rostra.db")
    [(status, reason)] = db.execute("SELECT status, reason FROM debates").fetchall()
    db.close()
    assert status == "failed" and reason == KEY_REFUSED


async def test_a_model_that_keeps_failing_ends_the_debate_after_the_limit(tmp_path: Path) -> None:
    failing: list[Any] = [{"error": "overloaded (529)"}] * 20
    script = {"proposition": ["P1.", *failing], "opposition": failing}
    run = await run_debate(
        tmp_path,
        script=script,
        options={"rounds": 3, "exchanges_per_round": 2},
        model={"failure_limit": 4},
    )
    assert run.result.reason == "failed"
    assert run.result.detail == failed_in_a_row(4)
    assert (
        run.record is not None and run.record.status == "failed" and run.record.reason == failed_in_a_row(4)
    )
    # the opposition's first turn failed twice (a fallback), the next turn twice more: the limit
    turns = run.turns()
    assert [t.fallback for t in turns if not t.interrupted] == [False, True]
    [down] = [n for n in run.of(Notice) if n.code == "model_down"]
    assert failed_in_a_row(4) in down.message
    done = run.of(DebateCompleted)[0]
    assert done.reason == "failed" and done.stats.fallbacks == 1


async def test_an_isolated_failure_still_falls_back_and_is_counted(tmp_path: Path) -> None:
    script = {"opposition": [{"error": "overloaded (529)"}, {"error": "overloaded (529)"}, "O2.", "O3."]}
    run = await run_debate(tmp_path, script=script, options={"rounds": 2, "exchanges_per_round": 2})
    assert run.result.reason != "failed"
    stats = run.result.stats
    assert stats.fallbacks == 1
    fallback = next(t for t in run.of(TurnCompleted) if t.fallback)
    persona = next(p for p in stats.per_persona if p.persona.id == fallback.speaker.id)
    spoken = [t for t in run.of(TurnCompleted) if t.speaker.id == fallback.speaker.id and not t.fallback]
    assert persona.words == sum(word_count(t.text) for t in spoken)  # a stand-in line is nobody's words
    assert stats.words == sum(p.words for p in stats.per_persona)  # the figures agree with each other
    assert "1 fallback line" in stats.fallbacks_said()
