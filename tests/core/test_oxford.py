"""The oxford format: focus question, rounds, the judge's rulings, the audience, anonymised judging."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import Secrets
from core.errors import ModelConfigError, SpecError
from core.events import (
    DebateStarted,
    Event,
    HumanVoteOpened,
    Notice,
    TurnCompleted,
    Verdict,
    VotingClosed,
    VotingStarted,
)
from core.formats.oxford import anonymise, audience_winner
from core.research import find_sources
from core.session import DebateHandle
from testkit.anthropic_api import FakeAnthropic
from tests.core.runs import run_debate
from tests.helpers import make_config

QUIET = {"humans": "off"}


def ruling(decision: str, winner: str | None = None, reasoning: str = "Because.") -> dict[str, Any]:
    return {"decision": decision, "winner": winner, "reasoning": reasoning}


async def test_a_round_is_proposer_critic_distillation_then_the_judge(tmp_path: Path) -> None:
    script = {"judge": [ruling("verdict", "critic", "The critic's steelman held up.")]}
    run = await run_debate(tmp_path, fmt="oxford", script=script, options=QUIET)
    roles = {m.persona.id: m.role for m in run.of(DebateStarted)[0].cast}
    assert roles == {"celeste": "proposer", "vera": "critic", "sol": "moderator", "juno": "judge"}
    turns = run.turns()
    assert [(t.role, t.round) for t in turns] == [
        ("moderator", 0),
        ("proposer", 1),
        ("critic", 1),
        ("moderator", 1),
    ]
    [verdict] = run.of(Verdict)
    assert verdict.final and verdict.winner == "critic" and verdict.by is not None and verdict.by.id == "juno"
    assert verdict.winner_label == "The critic wins (Vera Stone, against the motion)"
    assert verdict.reasoning == "The critic's steelman held up."
    assert run.result.summary == "Judge: The critic wins (Vera Stone, against the motion)."
    order = [e.kind for e in run.sink.events if e.kind in ("turn_completed", "verdict")]
    assert order[-2:] == ["turn_completed", "verdict"]


async def test_the_judge_may_continue_then_rule(tmp_path: Path) -> None:
    script = {"judge": [ruling("continue", reasoning="Not settled yet."), ruling("verdict", "proposer")]}
    run = await run_debate(tmp_path, fmt="oxford", script=script, options={**QUIET, "rounds": 3})
    first, second = run.of(Verdict)
    assert not first.final and first.winner is None and first.title == "Round 1: the debate continues"
    assert first.reasoning == "Not settled yet."
    assert second.final and second.winner == "proposer"
    assert max(t.round for t in run.turns()) == 2


async def test_the_round_cap_forces_a_ruling(tmp_path: Path) -> None:
    script = {"judge": [ruling("continue", reasoning="Keep going.")]}
    run = await run_debate(tmp_path, fmt="oxford", script=script, options={**QUIET, "rounds": 2})
    verdicts = run.of(Verdict)
    assert [v.final for v in verdicts] == [False, True]
    assert verdicts[-1].winner == "draw" and verdicts[-1].winner_label == "A draw"
    assert any(n.code == "judge_capped" for n in run.of(Notice))
    assert max(t.round for t in run.turns()) == 2


async def test_an_unreadable_ruling_is_reported_and_the_cap_still_ends_the_debate(tmp_path: Path) -> None:
    script = {"judge": ["I simply cannot decide."]}
    run = await run_debate(tmp_path, fmt="oxford", script=script, options={**QUIET, "rounds": 1})
    assert any(n.code == "judge_failed" and "could not be read" in n.message for n in run.of(Notice))
    [verdict] = run.of(Verdict)
    assert verdict.final and verdict.winner == "draw"


async def test_the_critic_is_asked_to_steelman_and_the_proposer_to_engage(tmp_path: Path) -> None:
    api = FakeAnthropic(structured=lambda body: json.dumps(ruling("verdict", "draw")))
    await api.start()
    try:
        await run_debate(
            tmp_path,
            fmt="oxford",
            options=QUIET,
            model={"default": "anthropic:claude-sonnet-4-5", "anthropic_base_url": api.base_url},
            secrets=Secrets(anthropic_api_key="sk-test"),
        )
    finally:
        await api.stop()
    prompts = {_system_name(r.body): _prompt(r.body) for r in api.requests}
    assert "First steelman the proposer's position" in prompts["Vera Stone"]
    opening = _prompt(api.requests[0].body)
    assert _system_name(api.requests[0].body) == "Sol Amari"
    assert "turn the motion into one sharp focus question" in opening


def _system_name(body: dict[str, Any]) -> str:
    text: str = body["system"][0]["text"]
    return text.removeprefix("You are ").split(",")[0]


def _prompt(body: dict[str, Any]) -> str:
    return "".join(str(block["text"]) for block in body["messages"][-1]["content"])  # cache blocks joined


@pytest.fixture
async def judge_api() -> AsyncIterator[FakeAnthropic]:
    api = FakeAnthropic(
        turn_text="Celeste Mbeki and Vera Stone both know Sol Amari asked about buses.",
        structured=lambda body: json.dumps(ruling("verdict", "proposer", "Side A answered the question.")),
    )
    await api.start()
    yield api
    await api.stop()


async def test_the_judge_reads_an_anonymised_transcript(tmp_path: Path, judge_api: FakeAnthropic) -> None:
    run = await run_debate(
        tmp_path,
        fmt="oxford",
        options=QUIET,
        model={"default": "anthropic:claude-sonnet-4-5", "anthropic_base_url": judge_api.base_url},
        secrets=Secrets(anthropic_api_key="sk-test"),
    )
    judge_requests = [r.body for r in judge_api.requests if _system_name(r.body) == "Juno Reyes"]
    assert len(judge_requests) == 1
    prompt = _prompt(judge_requests[0])
    for name in ("Celeste", "Mbeki", "Vera", "Stone", "Sol", "Amari"):
        assert name not in prompt
    assert "Side A" in prompt and "Side B" in prompt
    assert "Side A both know" in prompt or "Side B both know" in prompt  # names in the text too
    assert run.of(Verdict)[0].winner == "proposer"


def test_anonymise_replaces_whole_names_only() -> None:
    names = {"Vera Stone": "Side B", "Vera": "Side B", "Sol": "Moderator"}
    assert anonymise("As Vera Stone said, and vera agreed, Solace remains.", names) == (
        "As Side B said, and Side B agreed, Solace remains."
    )


def test_the_audience_winner_is_the_side_that_gained_most() -> None:
    assert audience_winner({"for": 5, "against": 5}, {"for": 4, "against": 7}) == ("critic", -1, 2)
    assert audience_winner({"for": 1, "against": 3}, {"for": 4, "against": 3}) == ("proposer", 3, 0)
    assert audience_winner({}, {"for": 2, "against": 2}) == ("draw", 2, 2)


async def test_the_audience_votes_before_and_after_and_can_disagree_with_the_judge(tmp_path: Path) -> None:
    ballots = {
        "audience-before": {"u1": "for", "u2": "for", "u3": "against", "u4": "undecided"},
        "audience-after": {"u1": "for", "u2": "against", "u3": "against", "u4": "against"},
    }

    async def audience(rt: object, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            for user, choice in ballots[event.vote_id].items():
                await handle.cast_human_vote(event.vote_id, user, choice, voter_name=user)

    script = {"judge": [ruling("verdict", "proposer", "Stronger evidence.")]}
    run = await run_debate(
        tmp_path, fmt="oxford", script=script, hook=audience, options={"humans": "vote", "human_window": 20}
    )
    started = [v.vote_id for v in run.of(VotingStarted)]
    assert started == ["audience-before", "audience-after"]
    kinds = [e.kind for e in run.sink.events]
    assert kinds.index("voting_closed") < kinds.index(
        "turn_started"
    )  # the first vote comes before the opening
    before, after = run.of(VotingClosed)
    assert before.human_tally == {"for": 2, "against": 1, "undecided": 1}
    assert after.human_tally == {"for": 1, "against": 3, "undecided": 0}
    judge, crowd = run.of(Verdict)
    assert judge.winner == "proposer" and crowd.title == "Audience" and crowd.winner == "critic"
    assert crowd.reasoning == "For -1, against +2 between the votes before and after the debate."
    assert run.result.summary == (
        "Judge: The proposer wins (Celeste Mbeki, for the motion)."
        " Audience: The critic wins (Vera Stone, against the motion)."
    )


async def test_options_that_do_not_apply_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="Unknown option 'duration'"):
        await run_debate(tmp_path, fmt="oxford", options={"duration": 300})
    with pytest.raises(SpecError, match="humans must be one of"):
        await run_debate(tmp_path, fmt="oxford", options={"humans": "tiebreak"})


async def test_research_needs_its_key(tmp_path: Path) -> None:
    formats = make_config(tmp_path).formats.model_dump()
    formats["oxford"]["research"]["enabled"] = True
    with pytest.raises(ModelConfigError, match="TAVILY_API_KEY is not set"):
        await run_debate(tmp_path, fmt="oxford", options=QUIET, formats=formats)


def test_sources_are_the_markdown_links_a_turn_cites() -> None:
    text = "See [a study](https://example.org/a) and [again](https://example.org/a), [b](http://b.test/x)."
    assert [(s.title, s.url) for s in find_sources(text)] == [
        ("a study", "https://example.org/a"),
        ("b", "http://b.test/x"),
    ]


async def test_every_turn_is_a_real_turn_with_text(tmp_path: Path) -> None:
    run = await run_debate(tmp_path, fmt="oxford", options=QUIET)
    assert all(isinstance(t, TurnCompleted) and t.text for t in run.turns())
    assert run.turns()[0].text.startswith("[rehearsal]") and run.turns()[0].text.endswith("?")
