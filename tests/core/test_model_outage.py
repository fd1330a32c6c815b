"""A dead model is given up on: a refused key ends the debate at once, failure after failure ends it
after `model.failure_limit`; an isolated failure still falls back, and every fallback is counted. An
unavailable one (overloaded, 5xx, rate-limited) is waited out instead, from its first failure (no
turn or vote is lost to a fallback): the debate pauses, says so, goes on when the model answers, and
past `model.outage_limit` stops resumable."""

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

from bot.config import Secrets
from core.clock import RealClock
from core.events import DebateCompleted, Event, Notice, TurnCompleted, VoteCast, VotingStarted
from core.llm.breaker import KEY_REFUSED, failed_in_a_row, refuses_key, unavailable, unavailable_for
from core.spec import DebateSpec
from core.state import word_count
from testkit.anthropic_api import FakeAnthropic
from testkit.server import Fault
from tests.core.runs import run_debate
from tests.core.test_resume import config_for, events_of, resume, run_until
from tests.helpers import REPO, RecordingSink, make_config, write_script


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


def test_an_unavailable_model_is_told_from_one_that_refuses_the_call() -> None:
    overloaded = "Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error'}}"
    assert unavailable(overloaded) == "overloaded"
    assert (
        unavailable("Error code: 503 - {'type': 'error', 'error': {'type': 'api_error'}}") == "a server error"
    )
    assert unavailable("Error code: 429 - {'error': {'type': 'rate_limit_error'}}") == "rate-limited"
    assert unavailable(TimeoutError("no reply within 120 s")) == "no answer"
    assert unavailable(ConnectionResetError("reset by peer")) == "no answer"
    assert unavailable("Error code: 401 - {'type': 'authentication_error'}") is None  # refused, not away
    assert unavailable("Error code: 400 - {'type': 'invalid_request_error'}") is None


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
    failing: list[Any] = [{"error": "invalid_request_error: the prompt is too long (400)"}] * 20
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
    refused = {"error": "invalid_request_error: the reply broke off (400)"}  # not an unavailable model
    script = {"opposition": [refused, refused, "O2.", "O3."]}
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


OVERLOADED: dict[str, Any] = {
    "error": "Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error'}}"
}


async def test_an_overloaded_model_is_waited_out_and_the_debate_goes_on(tmp_path: Path) -> None:
    """Failure after failure, but the model is overloaded, not refusing: the debate pauses (its
    clock stands still, the thread told once), tries again with a backoff, and goes on when the
    model answers, saying how long it paused. No turn is lost to a stand-in line (the first failures
    of an outage used to fall back), and it ends as it would have, not failed."""
    script = {  # the provider overloaded a while (past the failure limit), then back
        "proposition": ["P1.", *[OVERLOADED] * 5, "P2.", "P3."],
        "opposition": ["O1.", "O2."],
    }
    run = await run_debate(
        tmp_path, script=script, options={"rounds": 2, "exchanges_per_round": 2}, model={"failure_limit": 4}
    )
    assert run.result.reason == "max_rounds", run.result.detail
    [paused] = [n for n in run.of(Notice) if n.code == "model_paused"]
    [back] = [n for n in run.of(Notice) if n.code == "model_back"]
    assert "overloaded" in paused.message and "tries again" in paused.message
    assert paused.seq < back.seq and back.message.startswith("Paused for ")
    # the turn the outage met waited and was spoken: nothing fell back
    spoken = [(t.text, t.fallback) for t in run.turns() if t.role in ("proposition", "opposition")]
    assert [text for text, _ in spoken][:3] == ["P1.", "O1.", "P2."]
    assert not any(fallback for _, fallback in spoken)
    assert not [n for n in run.of(Notice) if n.code == "turn_failed"]
    done = run.of(DebateCompleted)[0]
    waited = float(back.message.split()[2])
    assert done.stats.paused_seconds >= waited > 0  # the debate's clock stood still meanwhile
    assert [e.seq for e in run.stored] == list(range(1, len(run.stored) + 1))


async def test_one_overloaded_answer_is_tried_again_quietly_and_the_turn_is_spoken(tmp_path: Path) -> None:
    """A blip: the call is made again after a moment, nothing is said in the thread, and the turn it
    met is spoken, not replaced by a stand-in line."""
    script = {"opposition": [OVERLOADED, "O1.", "O2."]}
    run = await run_debate(tmp_path, script=script, options={"rounds": 2, "exchanges_per_round": 1})
    assert run.result.reason == "max_rounds", run.result.detail
    assert [t.text for t in run.turns() if t.role == "opposition"] == ["O1.", "O2."]
    assert not [t for t in run.turns() if t.fallback]
    assert not [n for n in run.of(Notice) if n.code in ("model_paused", "model_back", "turn_failed")]


async def test_a_model_unavailable_past_the_outage_limit_stops_the_debate_resumable(tmp_path: Path) -> None:
    script = {"opposition": [OVERLOADED] * 40}
    run = await run_debate(
        tmp_path,
        script=script,
        options={"rounds": 2, "exchanges_per_round": 1},
        model={"failure_limit": 2, "outage_limit": 60},
    )
    assert run.result.reason == "interrupted"
    assert run.record is not None and run.record.status == "interrupted"
    assert not run.of(DebateCompleted)  # not closed: it goes on once resumed
    [stopped] = [n for n in run.of(Notice) if n.code == "model_unavailable"]
    assert unavailable_for(60) in stopped.message and "Resume it" in stopped.message
    assert len([n for n in run.of(Notice) if n.code == "model_paused"]) == 1


async def test_a_debate_the_model_outage_stopped_goes_on_when_resumed(tmp_path: Path) -> None:
    limits = {"failure_limit": 2, "outage_limit": 60}
    first = await run_debate(
        tmp_path,
        script={"proposition": ["P1.", *[OVERLOADED] * 40], "opposition": [OVERLOADED] * 40},
        options={"rounds": 2, "exchanges_per_round": 1},
        model=limits,
    )
    assert first.result.reason == "interrupted"
    answering = {"proposition": ["P1.", "P2.", "P3."], "opposition": ["O1.", "O2.", "O3."]}
    config = make_config(tmp_path, model={"script": str(write_script(tmp_path, answering)), **limits})
    sink = RecordingSink()
    [handle], [result] = await resume(config, sink)
    assert handle.debate_id == first.debate_id and result.reason == "max_rounds", result.detail
    events, record = await events_of(config, first.debate_id)
    assert record is not None and record.status == "completed"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    codes = [e.code for e in events if isinstance(e, Notice)]
    assert codes.count("model_paused") == 1 and codes.count("model_unavailable") == 1
    assert "model_back" not in codes  # the resumed debate found the model answering: nothing to say
    assert len([e for e in events if isinstance(e, DebateCompleted)]) == 1


@pytest.mark.parametrize("still_down", [0, 3], ids=["answering", "still overloaded a while"])
async def test_a_debate_taken_up_in_the_middle_of_a_model_outage_does_not_say_it_twice(
    tmp_path: Path, still_down: int
) -> None:
    """The process running the debate goes while the debate waits for the model, the thread told so.
    The debate taken up again (a takeover, a restart) does not tell the thread a second time, and
    says when the model answers, without claiming how long it was down."""
    overloaded = {"failure_limit": 2, "outage_limit": 100_000}
    first = config_for(tmp_path, {"proposition": ["P1."], "opposition": [OVERLOADED] * 200})
    spec = DebateSpec(
        "arena", "Should cities ban cars?", {"rounds": 2, "exchanges_per_round": 1, "humans": "off"}
    )
    first = first.model_copy(update={"model": first.model.model_copy(update=overloaded)})
    debate_id = await run_until(first, spec, lambda e: isinstance(e, Notice) and e.code == "model_paused")
    later = {"proposition": ["P1.", "P2.", "P3."], "opposition": [*[OVERLOADED] * still_down, "O1.", "O2."]}
    config = config_for(tmp_path, later)
    config = config.model_copy(update={"model": config.model.model_copy(update=overloaded)})
    [handle], [result] = await resume(config, RecordingSink())
    assert handle.debate_id == debate_id and result.reason == "max_rounds", result.detail
    events, _ = await events_of(config, debate_id)
    told = [e.message for e in events if isinstance(e, Notice) and e.code in ("model_paused", "model_back")]
    assert len(told) == 2 and told[0].startswith("The model is not answering"), told
    assert told[1] == "The model answers again. The debate goes on."
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


@pytest.mark.slow
@pytest.mark.parametrize("moment", [TurnCompleted, VotingStarted], ids=["after a turn", "as observers vote"])
async def test_claude_overloaded_for_30_s_is_waited_out_and_the_debate_ends_as_it_would_have(
    tmp_path: Path, moment: type[Event]
) -> None:
    """The real client (agno's Claude, the Anthropic SDK with its own retries) against the local fake,
    which answers 529 overloaded to every request for 30 s from the first turn's end, or from the
    moment the observers vote. The debate neither ends failed nor keeps asking: it waits with a
    backoff and plays to its last round, and the outage costs no turn (a stand-in line) and no vote
    (counted as keep by default): the calls it met were made again once Claude answered."""
    api = FakeAnthropic()
    await api.start()
    outage: list[float] = []

    def overload(rt: Any, handle: Any, event: Event) -> None:
        if isinstance(event, moment) and not outage:
            outage.append(time.monotonic())
            body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            api.add_fault(
                Fault(matches=lambda r: True, status=529, body=body, times=None, until=outage[0] + 30)
            )

    try:
        run = await run_debate(
            tmp_path,
            options={"rounds": 2, "exchanges_per_round": 2, "first_speaker": "ada"},
            model={"default": "anthropic:claude-sonnet-5-5", "anthropic_base_url": api.base_url},
            limits={"max_rounds": 2},
            secrets=Secrets(anthropic_api_key="sk-test-offline"),
            clock=RealClock(),
            hook=overload,
        )
    finally:
        await api.stop()
    assert run.result.reason == "max_rounds", run.result.detail
    assert not [n for n in run.of(Notice) if n.code == "model_down"]
    [paused] = [n for n in run.of(Notice) if n.code == "model_paused"]
    [back] = [n for n in run.of(Notice) if n.code == "model_back"]
    assert "overloaded" in paused.message
    assert float(back.message.split()[2]) >= 20  # it did wait the outage out
    during = [r for r in api.requests if outage[0] <= r.at <= outage[0] + 30]
    assert len(during) < 60, len(during)  # tried again with a backoff, not in a loop
    assert not [t for t in run.of(TurnCompleted) if t.fallback]
    assert not [v for v in run.of(VoteCast) if v.defaulted]
    assert not [n for n in run.of(Notice) if n.code in ("turn_failed", "vote_failed")]
