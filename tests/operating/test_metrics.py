"""The Prometheus endpoint after a scripted debate: its counters match the debate's events."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from adapters.metering import platform_trace, route_of
from bot.metrics import Metrics
from bot.runtime import Runtime
from core.events import DebateCompleted, Event, HumanVoteOpened, TurnCompleted, VoteCast
from core.observe import platforms
from core.session import DebateHandle
from core.usage import debate_usage
from testkit.server import FakeServer, Fault
from tests.core.runs import run_debate

PRICE = {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(rt: Runtime, path: str = "/metrics") -> tuple[int, str]:
    assert rt.operations is not None and rt.operations.server is not None
    url = f"http://127.0.0.1:{rt.operations.server.port}{path}"
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


def samples(text: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


def total(found: Samples, name: str, **labels: str) -> float:
    return sum(
        v for (n, ls), v in found.items() if n == name and all((k, val) in ls for k, val in labels.items())
    )


async def test_the_metrics_endpoint_counts_what_the_debate_did(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def hook(rt: Runtime, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            await handle.cast_human_vote(event.vote_id, "u1", "keep", voter_name="Ana")
            await handle.cast_human_vote(event.vote_id, "u2", "replace", voter_name="Bo")
        if isinstance(event, TurnCompleted) and "running" not in seen:
            seen["running"] = samples((await scrape(rt))[1])
        if isinstance(event, DebateCompleted):
            status, text = await scrape(rt)
            assert status == 200
            seen["end"] = samples(text)

    run = await run_debate(
        tmp_path,
        options={"rounds": 3, "exchanges_per_round": 1, "humans": "vote"},
        model={"prices": {"scripted": PRICE}},
        metrics={"port": 0},
        hook=hook,
    )
    during, after = seen["running"], seen["end"]
    assert total(during, "rostra_debates_running", format="arena") == 1
    assert total(after, "rostra_debates_started_total", format="arena") == 1
    assert total(after, "rostra_debates_finished_total", format="arena", reason=run.result.reason) == 1

    events = run.sink.events
    for kind, n in Counter(e.kind for e in events).items():
        assert total(after, "rostra_events_total", format="arena", kind=kind) == n, kind
    assert total(after, "rostra_store_append_seconds_count") == len(events)

    turns = [t for t in events if isinstance(t, TurnCompleted)]
    ai_votes = [v for v in events if isinstance(v, VoteCast) and not v.voter.human]
    human_votes = [v for v in events if isinstance(v, VoteCast) and v.voter.human]
    assert len(human_votes) == 4 and ai_votes
    assert total(after, "rostra_human_votes_total", format="arena") == 4
    assert total(after, "rostra_ai_votes_total", format="arena") == len(ai_votes)
    assert total(after, "rostra_model_calls_total", outcome="ok") == len(turns) + len(ai_votes)
    assert total(after, "rostra_model_calls_total", role="observer") == len(ai_votes)
    assert total(after, "rostra_model_calls_total", role="proposition") == len(run.turns("proposition"))
    assert total(after, "rostra_model_errors_total") == 0
    assert total(after, "rostra_model_call_seconds_count", provider="scripted") == len(turns) + len(ai_votes)
    assert total(after, "rostra_model_time_to_first_token_seconds_count") == len(turns)  # streamed only
    # every call's stable prefix (system prompt + transcript so far) is measured
    assert total(after, "rostra_model_cacheable_prefix_tokens_count") == len(turns) + len(ai_votes)
    assert total(after, "rostra_model_cacheable_prefix_tokens_sum") > 100 * len(turns)

    used = debate_usage(events)
    assert total(after, "rostra_model_tokens_total", type="input") == used.input_tokens > 0
    assert total(after, "rostra_model_tokens_total", type="output") == used.output_tokens > 0
    assert total(after, "rostra_model_cost_usd_total") == pytest.approx(used.cost_usd)
    assert used.cost_usd == pytest.approx(run.result.stats.tokens.cost_usd)


async def test_platform_requests_429s_and_retries_are_counted_from_real_http() -> None:
    metrics = Metrics()
    platforms.observers.append(metrics)
    server: FakeServer[str] = FakeServer()
    server.add_fault(Fault(matches=lambda path: True, status=429, body={}, headers={"Retry-After": "0"}))

    async def handler(request: web.Request) -> web.Response:
        fault = server.fault_for(server.record(request.path))  # the first answer is a 429
        status = 200 if fault is None else fault.status
        return web.json_response({}, status=status, headers={"Retry-After": "0"})

    server.app.router.add_post("/api/v10/channels/{cid}/messages", handler)
    async with server:
        try:
            async with aiohttp.ClientSession(trace_configs=[platform_trace("discord")]) as http:
                for _ in range(2):
                    async with http.post(f"{server.root}/api/v10/channels/123456/messages") as r:
                        await r.read()
        finally:
            platforms.observers.remove(metrics)
    found = samples(metrics.exposition().decode())
    route = "POST /channels/:id/messages"
    assert total(found, "rostra_platform_requests_total", platform="discord", method=route) == 2
    assert total(found, "rostra_platform_requests_total", platform="discord", status="429") == 1
    assert total(found, "rostra_platform_rate_limited_total", platform="discord") == 1
    assert total(found, "rostra_platform_retries_total", platform="discord") == 1


def test_routes_never_carry_ids_or_tokens() -> None:
    assert route_of("/api/v10/webhooks/1456074443980800015/aB3_secret-Token99") == "/webhooks/:id/:id"
    assert route_of("/api/v10/interactions/99/tok3n/callback") == "/interactions/:id/:id/callback"
