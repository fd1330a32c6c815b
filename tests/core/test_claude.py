"""A real turn through agno's Claude class against a local fake of the Anthropic Messages API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import Secrets
from core.events import TurnCompleted, TurnDelta, VoteCast
from tests.core.runs import run_debate
from tests.fakes.anthropic_api import FakeAnthropic


@pytest.fixture
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    api = FakeAnthropic()
    await api.start()
    yield api
    await api.stop()


async def test_a_debate_through_claude_streams_turns_and_reads_structured_votes(
    tmp_path: Path, anthropic_api: FakeAnthropic
) -> None:
    # The models config.yaml chooses: Sonnet 5.5 speaks and sums up, Haiku 5.5 casts the ballots.
    run = await run_debate(
        tmp_path,
        options={"rounds": 1, "exchanges_per_round": 1, "first_speaker": "ada"},
        model={
            "default": "anthropic:claude-sonnet-5-5",
            "ballots": "anthropic:claude-haiku-5-5",
            "anthropic_base_url": anthropic_api.base_url,
        },
        secrets=Secrets(anthropic_api_key="sk-test-offline"),
    )
    first = anthropic_api.requests[0]
    credentials = first.headers.get("x-api-key", "") + first.headers.get("authorization", "")
    assert "sk-test-offline" in credentials
    body = first.body
    assert body["model"] == "claude-sonnet-5-5" and body["stream"] is True
    # Claude 5 refuses a non-default temperature; the configured effort is sent instead.
    assert body["max_tokens"] == 600 and "temperature" not in body
    assert body["output_config"] == {"effort": "low"}
    [system] = body["system"]
    assert system["cache_control"] == {"type": "ephemeral"}  # the stable prefix is marked for caching
    assert system["text"].startswith("You are Ada Quill") and "Should cities ban cars?" in system["text"]
    prompt = body["messages"][0]["content"][0]["text"]
    assert "You speak FOR the motion" in prompt

    opening = run.turns("proposition")[0]
    assert opening.text == "Cars clog cities. Buses do not."
    deltas = "".join(d.text for d in run.of(TurnDelta) if d.turn_id == opening.turn_id)
    assert deltas == opening.text
    assert (opening.usage.input_tokens, opening.usage.output_tokens, opening.usage.cache_read_tokens) == (
        120,
        9,
        100,
    )

    votes = [r.body for r in anthropic_api.requests if not r.body.get("stream")]
    assert len(votes) == 4
    assert all(v["model"] == "claude-haiku-5-5" for v in votes)
    assert all(v["max_tokens"] == 300 and "temperature" not in v for v in votes)
    assert all(v["output_config"]["effort"] == "low" for v in votes)
    assert all("vote" in str(v["output_config"].get("format", {})) for v in votes)  # native structured output
    cast = run.of(VoteCast)
    assert [(v.choice, v.reason) for v in cast] == [("keep", "Answered the point directly.")] * 4

    summary = [r.body for r in anthropic_api.requests if "You are Sol Amari" in r.body["system"][0]["text"]]
    assert summary and summary[0]["max_tokens"] == 900 and summary[0]["model"] == "claude-sonnet-5-5"
    assert summary[0]["output_config"] == {"effort": "medium"}
    assert isinstance(run.sink.events[-1].stats.tokens.total, int)  # type: ignore[union-attr]
    assert run.result.stats.tokens.cache_read_tokens == 100 * (len(run.of(TurnCompleted)) + 4)


async def test_a_topic_with_braces_reaches_the_model_verbatim(
    tmp_path: Path, anthropic_api: FakeAnthropic
) -> None:
    topic = "Is {x} better than {y}?"
    await run_debate(
        tmp_path,
        topic=topic,
        options={"rounds": 1, "exchanges_per_round": 1},
        model={"default": "anthropic:claude-sonnet-4-5", "anthropic_base_url": anthropic_api.base_url},
        secrets=Secrets(anthropic_api_key="sk-test-offline"),
    )
    assert topic in anthropic_api.requests[0].body["system"][0]["text"]


async def test_older_claude_models_keep_their_temperature_and_roles_override_the_ballot_model(
    tmp_path: Path, anthropic_api: FakeAnthropic
) -> None:
    await run_debate(
        tmp_path,
        options={"rounds": 1, "exchanges_per_round": 1},
        model={
            "default": "anthropic:claude-sonnet-4-5",
            "roles": {"observer": "anthropic:claude-haiku-4-5"},
            "anthropic_base_url": anthropic_api.base_url,
        },
        secrets=Secrets(anthropic_api_key="sk-test-offline"),
    )
    turns = [r.body for r in anthropic_api.requests if r.body.get("stream")]
    votes = [r.body for r in anthropic_api.requests if not r.body.get("stream")]
    assert {t["model"] for t in turns} == {"claude-sonnet-4-5"}
    assert {v["model"] for v in votes} == {"claude-haiku-4-5"}
    assert turns[0]["temperature"] == 0.9 and "output_config" not in turns[0]
    assert all(v["temperature"] == 0.2 for v in votes)
