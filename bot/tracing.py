"""OpenTelemetry traces: a span per debate, with its turns, votes and model calls inside it, and a
span per platform API request. Off unless `tracing.enabled`.

Spans are built from what the engine reports (core.observe) with the times it recorded, so the
engine itself carries no tracing code. Attributes name the debate, its format, the persona and the
model; prompts, replies and topics are left out unless `tracing.include_text` is set.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import Span, Status, StatusCode

from bot.ops_settings import TracingSettings
from core.events import (
    DebateCompleted,
    DebateStarted,
    Event,
    TurnCompleted,
    TurnStarted,
    VoteCast,
    VotingClosed,
    VotingStarted,
)
from core.observe import DebateTags, ModelCall

ENDED_KEPT = 256
"""Ended debates whose span still parents deliveries that land after the closing event."""


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


@dataclass
class _Debate:
    span: Span
    turns: dict[str, Span] = field(default_factory=dict)
    speaking: dict[str, Span] = field(default_factory=dict)  # persona id → its open turn
    votes: dict[str, Span] = field(default_factory=dict)


class Tracing:
    def __init__(self, provider: TracerProvider, *, include_text: bool = False) -> None:
        self._provider = provider
        self._tracer = provider.get_tracer("rostra")
        self._include_text = include_text
        self._debates: dict[str, _Debate] = {}
        self._ended: OrderedDict[str, Span] = OrderedDict()  # late deliveries still join the trace

    @classmethod
    def from_settings(cls, settings: TracingSettings) -> Tracing:
        provider = TracerProvider(resource=Resource.create({"service.name": settings.service_name}))
        provider.add_span_processor(_processor(settings))
        return cls(provider, include_text=settings.include_text)

    def shutdown(self) -> None:
        for debate in list(self._debates.values()):
            self._close(debate, time.time_ns(), "process stopped")
        self._debates.clear()
        self._provider.shutdown()

    # --- core.observe.EventObserver ----------------------------------------------------------------

    def observe(self, event: Event, tags: DebateTags) -> None:
        at = _ns(event.at.timestamp())
        if isinstance(event, DebateStarted):
            self._debate(tags, at, event)
            return
        debate = self._debate(tags, at)
        context = trace.set_span_in_context(debate.span)
        if isinstance(event, TurnStarted):
            old = debate.turns.pop(event.turn_id, None)
            if old is not None:  # a retried turn replaces the attempt before it
                old.set_status(Status(StatusCode.ERROR, "retried"))
                old.end(end_time=at)
            span = self._tracer.start_span(
                "turn",
                context=context,
                start_time=at,
                attributes={
                    **self._base(tags),
                    "rostra.turn_id": event.turn_id,
                    "rostra.persona": event.speaker.id,
                    "rostra.role": event.role,
                    "rostra.round": event.round,
                    "rostra.attempt": event.attempt,
                },
            )
            debate.turns[event.turn_id] = span
            debate.speaking[event.speaker.id] = span
        elif isinstance(event, TurnCompleted):
            done = debate.turns.pop(event.turn_id, None)
            if done is not None:
                if debate.speaking.get(event.speaker.id) is done:
                    del debate.speaking[event.speaker.id]
                done.set_attribute("rostra.words", len(event.text.split()))
                if self._include_text:
                    done.set_attribute("rostra.text", event.text)
                done.end(end_time=at)
        elif isinstance(event, VotingStarted):
            debate.votes[event.vote_id] = self._tracer.start_span(
                "vote",
                context=context,
                start_time=at,
                attributes={
                    **self._base(tags),
                    "rostra.vote_id": event.vote_id,
                    "rostra.humans": event.humans,
                },
            )
        elif isinstance(event, VoteCast):
            vote = debate.votes.get(event.vote_id)
            if vote is not None:
                vote.add_event(
                    "ballot",
                    {
                        "rostra.voter": event.voter.id,
                        "rostra.human": event.voter.human,
                        "rostra.choice": event.choice,
                    },
                    timestamp=at,
                )
        elif isinstance(event, VotingClosed):
            vote = debate.votes.pop(event.vote_id, None)
            if vote is not None:
                vote.set_attribute("rostra.decision", event.decision)
                vote.end(end_time=at)
        elif isinstance(event, DebateCompleted):
            debate.span.set_attribute("rostra.reason", event.reason)
            debate.span.set_attribute("rostra.cost_usd", event.stats.tokens.cost_usd)
            self._close(debate, at, None if event.reason != "failed" else event.detail or "failed")
            self._debates.pop(tags.debate_id, None)
            self._ended[tags.debate_id] = debate.span
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)

    def _base(self, tags: DebateTags) -> dict[str, str]:
        return {"rostra.debate_id": tags.debate_id, "rostra.format": tags.format}

    def _debate(self, tags: DebateTags, at: int, started: DebateStarted | None = None) -> _Debate:
        found = self._debates.get(tags.debate_id)
        if found is not None:
            return found
        attributes = {**self._base(tags), "rostra.platform": tags.platform, "rostra.scope": tags.scope}
        if started is None:
            attributes["rostra.resumed"] = "true"
        elif self._include_text:
            attributes["rostra.topic"] = started.topic
        debate = _Debate(self._tracer.start_span("debate", start_time=at, attributes=attributes))
        self._debates[tags.debate_id] = debate
        return debate

    def _close(self, debate: _Debate, at: int, error: str | None) -> None:
        for span in [*debate.turns.values(), *debate.votes.values()]:
            span.end(end_time=at)
        if error:
            debate.span.set_status(Status(StatusCode.ERROR, error))
        debate.span.end(end_time=at)

    # --- core.observe.CallObserver -----------------------------------------------------------------

    def model_call(self, call: ModelCall) -> None:
        debate = self._debates.get(call.debate_id)
        parent: Span | None = None
        if debate is not None:
            parent = debate.speaking.get(call.persona)
            if parent is None and call.kind == "vote" and debate.votes:
                parent = list(debate.votes.values())[-1]
            parent = parent or debate.span
        u = call.usage
        attributes: dict[str, str | int | float] = {
            "rostra.debate_id": call.debate_id,
            "rostra.persona": call.persona,
            "rostra.role": call.role,
            "rostra.call_kind": call.kind,
            "gen_ai.system": call.provider,
            "gen_ai.request.model": call.model,
            "gen_ai.usage.input_tokens": u.input_tokens,
            "gen_ai.usage.output_tokens": u.output_tokens,
            "rostra.cache_read_tokens": u.cache_read_tokens,
            "rostra.cache_write_tokens": u.cache_write_tokens,
            "rostra.cost_usd": u.cost_usd,
            "rostra.cacheable_prefix_tokens": call.prefix_tokens,
        }
        ttft = call.time_to_first_token
        if ttft is not None:
            attributes["rostra.time_to_first_token"] = ttft
        if self._include_text:
            attributes["rostra.prompt"] = call.prompt
            attributes["rostra.reply"] = call.reply
        span = self._tracer.start_span(
            f"model {call.kind}",
            context=trace.set_span_in_context(parent) if parent is not None else None,
            start_time=_ns(call.started),
            attributes=attributes,
        )
        if call.error:
            span.set_status(Status(StatusCode.ERROR, call.error))
        span.end(end_time=_ns(call.ended))

    # --- core.observe.PlatformObserver -------------------------------------------------------------

    def request(self, platform: str, method: str, status: int, seconds: float) -> None:
        end = time.time_ns()
        span = self._tracer.start_span(
            f"{platform} {method}",
            kind=trace.SpanKind.CLIENT,
            start_time=end - _ns(seconds),
            attributes={
                "rostra.platform": platform,
                "rostra.method": method,
                "http.response.status_code": status,
            },
        )
        if status >= 400:
            span.set_status(Status(StatusCode.ERROR, f"HTTP {status}"))
        span.end(end_time=end)

    def retry(self, platform: str, method: str) -> None:
        return None

    def delivered(self, platform: str, event: Event, lag_seconds: float) -> None:
        """A span from the event being stored to its message in the channel, inside its debate."""
        end = time.time_ns()
        debate = self._debates.get(event.debate_id)
        parent = debate.span if debate is not None else self._ended.get(event.debate_id)
        span = self._tracer.start_span(
            f"deliver {event.kind}",
            context=trace.set_span_in_context(parent) if parent is not None else None,
            start_time=end - _ns(lag_seconds),
            attributes={
                "rostra.debate_id": event.debate_id,
                "rostra.platform": platform,
                "rostra.seq": event.seq,
            },
        )
        span.end(end_time=end)


def _processor(settings: TracingSettings) -> SpanProcessor:
    exporter: SpanExporter
    if settings.exporter == "console":
        exporter = ConsoleSpanExporter()
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise RuntimeError(
                "tracing.exporter otlp needs the OTLP exporter: pip install -e '.[otlp]' in the clone,"
                " or pip install opentelemetry-exporter-otlp-proto-http"
                " (or set tracing.exporter: console)"
            ) from None
        exporter = OTLPSpanExporter(endpoint=settings.endpoint) if settings.endpoint else OTLPSpanExporter()
    return BatchSpanProcessor(exporter)
