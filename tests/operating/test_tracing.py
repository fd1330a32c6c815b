"""OpenTelemetry spans for a debate, its turns and votes, and each model call (in-memory exporter)."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from bot.runtime import Runtime
from bot.tracing import Tracing
from core.clock import FakeClock
from core.events import TurnCompleted, VoteCast, VotingStarted
from core.ports import Binding
from core.spec import DebateSpec
from tests.helpers import RecordingSink, make_config


async def traced_debate(
    tmp_path: Path, *, include_text: bool
) -> tuple[list[ReadableSpan], RecordingSink, str]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = Tracing(provider, include_text=include_text)
    sink = RecordingSink()
    async with Runtime(make_config(tmp_path), clock=FakeClock()) as rt:
        rt.manager.observers.append(tracing)
        rt.models.observers.append(tracing)
        spec = DebateSpec(
            "arena", "Should cities ban cars?", {"humans": "off", "rounds": 3, "exchanges_per_round": 1}
        )
        handle = await rt.start_debate(
            spec, sink, binding=Binding(platform="discord", scope="g1", channel="c1")
        )
        await handle.wait()
    tracing.shutdown()
    return list(exporter.get_finished_spans()), sink, handle.debate_id


async def test_a_debate_is_one_trace_of_turns_votes_and_model_calls(tmp_path: Path) -> None:
    spans, sink, debate_id = await traced_debate(tmp_path, include_text=False)
    [debate] = [s for s in spans if s.name == "debate"]
    assert debate.attributes is not None
    assert debate.attributes["rostra.debate_id"] == debate_id
    assert debate.attributes["rostra.format"] == "arena" and debate.attributes["rostra.platform"] == "discord"
    assert debate.attributes["rostra.reason"] == "max_rounds"
    trace_id = debate.context.trace_id
    assert all(s.context.trace_id == trace_id for s in spans)  # one trace per debate

    turns = [s for s in spans if s.name == "turn"]
    completed = sink.of(TurnCompleted)
    assert len(turns) == len(completed)
    assert all(t.parent is not None and t.parent.span_id == debate.context.span_id for t in turns)
    assert [t.attributes["rostra.persona"] for t in turns] == [c.speaker.id for c in completed]  # type: ignore[index]

    votes = [s for s in spans if s.name == "vote"]
    assert len(votes) == len(sink.of(VotingStarted)) == 2
    assert sum(len(v.events) for v in votes) == len(sink.of(VoteCast))  # each ballot an event on its vote

    calls = [s for s in spans if s.name.startswith("model ")]
    assert len(calls) == len(completed) + len(sink.of(VoteCast))
    by_id = {s.context.span_id: s for s in spans}
    for call in calls:
        assert call.parent is not None
        parent = by_id[call.parent.span_id]
        assert call.attributes is not None and parent.attributes is not None
        if call.name == "model turn":  # inside the turn of the persona who spoke
            assert (
                parent.name == "turn"
                and parent.attributes["rostra.persona"] == call.attributes["rostra.persona"]
            )
        if call.name == "model vote":
            assert parent.name == "vote"
        assert call.attributes["gen_ai.request.model"] == "scripted"
        assert call.attributes["rostra.debate_id"] == debate_id

    # no message text unless asked
    texts = {t.text for t in completed}
    for span in spans:
        values = [str(v) for v in (span.attributes or {}).values()]
        assert not any(text in value for text in texts for value in values)
        assert "Should cities ban cars?" not in " ".join(values)


async def test_text_goes_on_the_spans_only_when_asked(tmp_path: Path) -> None:
    spans, sink, _ = await traced_debate(tmp_path, include_text=True)
    [debate] = [s for s in spans if s.name == "debate"]
    assert debate.attributes is not None and debate.attributes["rostra.topic"] == "Should cities ban cars?"
    first_turn_call = next(s for s in spans if s.name == "model turn")
    assert first_turn_call.attributes is not None
    assert sink.of(TurnCompleted)[0].text == first_turn_call.attributes["rostra.reply"]
    assert (
        "Should cities ban cars?" in str(first_turn_call.attributes["rostra.prompt"])
        or first_turn_call.attributes["rostra.prompt"]
    )
