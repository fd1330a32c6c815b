"""Slack Web API calls, the 429s Slack answers and the retries slack_sdk makes reach the metrics."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.parser import text_string_to_metric_families

from bot.metrics import Metrics
from bot.tracing import Tracing
from core.events import TurnDelta
from core.observe import platforms
from tests.adapters.slack.conftest import Harness


def attribute(span: ReadableSpan, name: str) -> Any:
    """One of a finished span's attributes (they are set on every span looked at here)."""
    assert span.attributes is not None
    return span.attributes[name]


@pytest.fixture
def metrics() -> Iterator[Metrics]:
    found = Metrics()
    platforms.observers.append(found)
    yield found
    platforms.observers.remove(found)


def count(metrics: Metrics, name: str, **labels: str) -> float:
    return sum(
        s.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for s in family.samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


async def test_a_429_is_counted_with_its_retry_and_every_call_is_counted(
    slack: Harness, metrics: Metrics, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(random, "random", lambda: 0.0)  # slack_sdk adds up to 1 s of jitter
    slack.api.fail_next("chat.postMessage", retry_after="1", when=lambda args: "username" in args)
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()

    posts = len(slack.api.calls_to("chat.postMessage"))
    assert posts >= 2
    # every HTTP request Slack saw, the 429 included
    assert (
        count(metrics, "rostra_platform_requests_total", platform="slack", method="chat.postMessage") == posts
    )
    assert count(metrics, "rostra_platform_requests_total", platform="slack", status="429") == 1
    assert count(metrics, "rostra_platform_rate_limited_total", platform="slack") == 1
    assert count(metrics, "rostra_platform_retries_total", platform="slack") == 1
    updates = len(slack.api.calls_to("chat.update"))
    assert count(metrics, "rostra_platform_requests_total", platform="slack", method="chat.update") == updates


async def test_each_event_delivered_to_the_thread_reports_its_lag(slack: Harness, metrics: Metrics) -> None:
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()
    events = await slack.events(await slack.only_debate_id())
    shown = [e for e in events if not isinstance(e, TurnDelta)]
    assert count(metrics, "rostra_delivery_lag_seconds_count", platform="slack") == len(shown)
    assert 0 <= count(metrics, "rostra_delivery_lag_seconds_sum", platform="slack") < 10 * len(shown)


async def test_deliveries_and_api_requests_are_traced_inside_the_debate(slack: Harness) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = Tracing(provider)
    slack.rt.manager.observers.append(tracing)
    platforms.observers.append(tracing)
    try:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        await slack.settle()
    finally:
        platforms.observers.remove(tracing)
    debate_id = await slack.only_debate_id()
    spans = exporter.get_finished_spans()
    [debate] = [s for s in spans if s.name == "debate"]
    deliveries = [s for s in spans if s.name.startswith("deliver ")]
    shown = [e for e in await slack.events(debate_id) if not isinstance(e, TurnDelta)]
    assert sorted(attribute(s, "rostra.seq") for s in deliveries) == [e.seq for e in shown]
    assert all(attribute(s, "rostra.debate_id") == debate_id for s in deliveries)
    # all in the debate's trace, even those that land after its closing event
    assert all(s.parent is not None and s.parent.span_id == debate.context.span_id for s in deliveries)
    assert any(s.name == "slack chat.postMessage" for s in spans)


@pytest.mark.parametrize("error", ["not_in_channel", "invalid_blocks"])
async def test_slack_errors_answered_with_http_200_are_counted_by_code(
    slack: Harness, metrics: Metrics, error: str
) -> None:
    slack.api.fail_next("chat.postMessage", status=200, error=error, when=lambda args: "username" in args)
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()
    assert count(metrics, "rostra_platform_api_errors_total", platform="slack", error=error) == 1
    assert count(metrics, "rostra_platform_api_errors_total", method="chat.postMessage") == 1


async def test_interim_edits_held_back_by_the_rate_windows_are_counted(
    slack: Harness, metrics: Metrics
) -> None:
    from adapters.slack.delivery.rates import rates_of

    edits = rates_of(slack.app.front.client)["chat.update"]
    edits.hits.extend([edits.now() + 3600] * 40)  # the workspace's edits used up for the hour
    await slack.mention("debate Should cities ban cars?")
    handle = await slack.wait_running()
    await handle.wait()
    await slack.settle()
    assert edits.skipped > 0
    assert count(metrics, "rostra_platform_edits_skipped_total", platform="slack") == edits.skipped
