"""A real turn through agno's Claude class against a local fake of the Anthropic Messages API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import Secrets
from core.events import TurnDelta, VoteCast
from core.usage import call_usages
from testkit.anthropic_api import FakeAnthropic
from tests.core.runs import run_debate


@pytest.fixture
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    api = FakeAnthropic()
    await api.start()
    yield api
    await api.stop()


def speech(n: int) -> str:
    """A turn of realistic length (about 250 tokens), different every time."""
    return f"Point {n}: streets are for people. " + " ".join(
        f"Claim {n}.{i} holds because the evidence from city {i} shows fewer crashes and cleaner air."
        for i in range(11)
    )


async def test_a_debate_through_claude_uses_the_models_per_role_and_really_caches(
    tmp_path: Path, anthropic_api: FakeAnthropic
) -> None:
    # The models config.yaml chooses: Sonnet 5.5 speaks and sums up, Haiku 5.5 casts the ballots.
    anthropic_api.turn_text = speech
    run = await run_debate(
        tmp_path,
        options={"rounds": 3, "exchanges_per_round": 2, "first_speaker": "ada"},
        model={
            "default": "anthropic:claude-sonnet-5-5",
            "ballots": "anthropic:claude-haiku-5-5",
            "anthropic_base_url": anthropic_api.base_url,
        },
        context={"strategy": "transcript"},
        limits={"max_rounds": 3},
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
    assert system["cache_control"] == {"type": "ephemeral"}
    assert system["text"].startswith("You are Ada Quill") and "Should cities ban cars?" in system["text"]

    # Ada's later turns: the transcript so far as one block per turn, a breakpoint after the last.
    ada = [
        r.body
        for r in anthropic_api.requests
        if r.body.get("stream") and "Ada Quill" in r.body["system"][0]["text"]
    ]
    assert len(ada) == 6
    last = ada[-1]["messages"][0]["content"]
    marked = [i for i, block in enumerate(last) if "cache_control" in block]
    assert len(marked) == 1 and marked[0] == len(last) - 2  # the task for this turn comes after it
    assert last[0]["text"].startswith("Turn by turn, in order:\n[")
    assert "You speak FOR the motion" in last[-1]["text"]
    assert all(
        block["text"] == earlier["text"]
        for block, earlier in zip(last, ada[-2]["messages"][0]["content"][:-1], strict=False)
    )

    # The stable prefix grows past Sonnet 5.5's documented minimum (1,024 tokens), then is read back.
    sonnet = [
        rep
        for r, rep in zip(anthropic_api.requests, anthropic_api.reports, strict=True)
        if r.body["model"] == "claude-sonnet-5-5"
    ]
    assert max(rep.breakpoints[-1] for rep in sonnet) > 1024
    assert any(rep.read > 1024 for rep in sonnet)
    tokens = run.result.stats.tokens
    assert tokens.cache_read_tokens == sum(rep.read for rep in anthropic_api.reports) > 0
    assert tokens.cache_write_tokens == sum(rep.written for rep in anthropic_api.reports) > 0
    # Each later call reads what the same speaker's previous call wrote, and writes only the new turns.
    ada_reports = [
        rep for r, rep in zip(anthropic_api.requests, anthropic_api.reports, strict=True) if r.body in ada
    ]
    assert ada_reports[-1].read == ada_reports[-2].breakpoints[-1]

    opening = run.turns("proposition")[0]
    assert opening.text == speech(1)
    deltas = "".join(d.text for d in run.of(TurnDelta) if d.turn_id == opening.turn_id)
    assert deltas == opening.text

    votes = [r.body for r in anthropic_api.requests if not r.body.get("stream")]
    assert len(votes) == 8  # four observers after rounds 1 and 2; none after the last
    assert all(v["model"] == "claude-haiku-5-5" for v in votes)
    assert all(v["max_tokens"] == 300 and "temperature" not in v for v in votes)
    assert all(v["output_config"]["effort"] == "low" for v in votes)
    assert all("vote" in str(v["output_config"].get("format", {})) for v in votes)  # native structured output
    cast = run.of(VoteCast)
    assert [(v.choice, v.reason) for v in cast] == [("keep", "Answered the point directly.")] * 8

    summary = [r.body for r in anthropic_api.requests if "You are Sol Amari" in r.body["system"][0]["text"]]
    assert summary and summary[0]["max_tokens"] == 900 and summary[0]["model"] == "claude-sonnet-5-5"
    assert summary[0]["output_config"] == {"effort": "medium"}

    # Money: every call priced by config.yaml's table, the debate's cost their sum.
    prices = {
        "anthropic:claude-sonnet-5-5": (2.0, 10.0, 2.5, 0.2),
        "anthropic:claude-haiku-5-5": (0.1, 0.5, 0.125, 0.01),
    }
    expected = 0.0
    for _, u in call_usages(run.stored):
        p = prices[u.model]
        expected += (
            u.input_tokens * p[0]
            + u.output_tokens * p[1]
            + u.cache_write_tokens * p[2]
            + u.cache_read_tokens * p[3]
        ) / 1e6
    assert {v.usage.model for v in cast} == {"anthropic:claude-haiku-5-5"}
    assert tokens.cost_usd == pytest.approx(expected) and expected > 0


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
        options={"rounds": 2, "exchanges_per_round": 1},
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
