"""Prometheus metrics: what the debates, the model calls and the platforms are doing.

`Metrics` is an observer of the engine (core.observe): every stored event, every live model call
and every platform API request the front ends report. It keeps its own registry, which the
operations server exposes at `/metrics`.
"""

from __future__ import annotations

import time
from collections import Counter as Tally
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from core.events import DebateCompleted, DebateStarted, Event, VoteCast
from core.observe import DebateTags, ModelCall

FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
SLOW = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0)
NETWORK = (*FAST, 5.0, 10.0, 30.0, 60.0)
PREFIX = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768)


class _Running(Collector):
    """`rostra_debates_running{format}`, read from the manager at scrape time."""

    def __init__(self, formats: Callable[[], Iterable[str]]) -> None:
        self._formats = formats

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("rostra_debates_running", "Debates running now", labels=["format"])
        for fmt, n in sorted(Tally(self._formats()).items()):
            family.add_metric([fmt], n)
        yield family


class Metrics:
    def __init__(self, running: Callable[[], Iterable[str]] = tuple) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.registry.register(_Running(running))
        self.debates_started = Counter(
            "rostra_debates_started",
            "Debates started (resumed ones are not counted again)",
            ["format"],
            registry=r,
        )
        self.debates_finished = Counter(
            "rostra_debates_finished", "Debates ended, by why", ["format", "reason"], registry=r
        )
        self.events = Counter("rostra_events", "Events stored and delivered", ["format", "kind"], registry=r)
        self.store_append = Histogram(
            "rostra_store_append_seconds",
            "From an event's stamp to its delivery: the store write (one transaction per event)",
            buckets=FAST,
            registry=r,
        )
        labels = ["provider", "model", "role"]
        self.model_calls = Counter("rostra_model_calls", "Live model calls", [*labels, "outcome"], registry=r)
        self.model_errors = Counter("rostra_model_errors", "Model calls that failed", labels, registry=r)
        self.model_seconds = Histogram(
            "rostra_model_call_seconds", "Model call latency, whole reply", labels, buckets=SLOW, registry=r
        )
        self.model_first_token = Histogram(
            "rostra_model_time_to_first_token_seconds",
            "Streamed turns: time to the first text",
            labels,
            buckets=SLOW,
            registry=r,
        )
        self.tokens = Counter("rostra_model_tokens", "Tokens by type", [*labels, "type"], registry=r)
        self.cost = Counter(
            "rostra_model_cost_usd", "Cost in US dollars by the price table", labels, registry=r
        )
        self.prefix = Histogram(
            "rostra_model_cacheable_prefix_tokens",
            "Estimated stable prefix each call sent (system prompt + transcript so far)",
            ["model"],
            buckets=PREFIX,
            registry=r,
        )
        self.platform_requests = Counter(
            "rostra_platform_requests", "Platform API requests", ["platform", "method", "status"], registry=r
        )
        self.platform_rate_limited = Counter(
            "rostra_platform_rate_limited", "Platform API requests answered 429", ["platform"], registry=r
        )
        self.platform_retries = Counter(
            "rostra_platform_retries", "Platform API retries", ["platform"], registry=r
        )
        self.platform_errors = Counter(
            "rostra_platform_api_errors",
            "Platform API requests answered with an error code (Slack's are often HTTP 200)",
            ["platform", "method", "error"],
            registry=r,
        )
        self.platform_edits_skipped = Counter(
            "rostra_platform_edits_skipped",
            "Interim edits held back by the rate windows (finals first)",
            ["platform"],
            registry=r,
        )
        self.platform_seconds = Histogram(
            "rostra_platform_request_seconds",
            "Platform API request latency",
            ["platform"],
            buckets=NETWORK,
            registry=r,
        )
        self.delivery_lag = Histogram(
            "rostra_delivery_lag_seconds",
            "From an event being stored to its message reaching the channel",
            ["platform"],
            buckets=NETWORK,
            registry=r,
        )
        self.human_votes = Counter("rostra_human_votes", "Votes cast by people", ["format"], registry=r)
        self.ai_votes = Counter("rostra_ai_votes", "Votes cast by personas", ["format"], registry=r)

    # --- core.observe.EventObserver ----------------------------------------------------------------

    def observe(self, event: Event, tags: DebateTags) -> None:
        self.events.labels(tags.format, event.kind).inc()
        if event.at.timestamp() > 0:
            self.store_append.observe(max(0.0, time.time() - event.at.timestamp()))
        if isinstance(event, DebateStarted):
            self.debates_started.labels(tags.format).inc()
        elif isinstance(event, DebateCompleted):
            self.debates_finished.labels(tags.format, event.reason).inc()
        elif isinstance(event, VoteCast):
            (self.human_votes if event.voter.human else self.ai_votes).labels(tags.format).inc()

    # --- core.observe.CallObserver -----------------------------------------------------------------

    def model_call(self, call: ModelCall) -> None:
        labels = (call.provider, call.model, call.role)
        self.model_calls.labels(*labels, "error" if call.error else "ok").inc()
        self.model_seconds.labels(*labels).observe(call.seconds)
        if call.error:
            self.model_errors.labels(*labels).inc()
        ttft = call.time_to_first_token
        if ttft is not None:
            self.model_first_token.labels(*labels).observe(ttft)
        u = call.usage
        for kind, n in (
            ("input", u.input_tokens),
            ("output", u.output_tokens),
            ("cache_read", u.cache_read_tokens),
            ("cache_write", u.cache_write_tokens),
        ):
            if n:
                self.tokens.labels(*labels, kind).inc(n)
        if u.cost_usd:
            self.cost.labels(*labels).inc(u.cost_usd)
        if call.prefix_tokens:
            self.prefix.labels(call.model).observe(call.prefix_tokens)

    # --- core.observe.PlatformObserver -------------------------------------------------------------

    def request(self, platform: str, method: str, status: int, seconds: float) -> None:
        self.platform_requests.labels(platform, method, str(status)).inc()
        self.platform_seconds.labels(platform).observe(seconds)
        if status == 429:
            self.platform_rate_limited.labels(platform).inc()

    def retry(self, platform: str, method: str) -> None:
        self.platform_retries.labels(platform).inc()

    def delivered(self, platform: str, event: Event, lag_seconds: float) -> None:
        self.delivery_lag.labels(platform).observe(max(0.0, lag_seconds))

    def api_error(self, platform: str, method: str, error: str) -> None:
        self.platform_errors.labels(platform, method, error).inc()

    def edit_skipped(self, platform: str) -> None:
        self.platform_edits_skipped.labels(platform).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
