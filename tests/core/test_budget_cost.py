"""The cost budget is a hard ceiling, as the token budget is: every format, at three sizes, never
records more than `limits.max_cost_per_debate` and ends with the cost-budget reason. Each call
reserves its worst-case cost at the price of the model it will use before it is made."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bot.config import Config, Secrets
from bot.runtime import Runtime
from core.budget import MICRO, BudgetExhausted, CallPlan, DebateBudget
from core.clock import FakeClock
from core.events import DebateCompleted, TurnCompleted, TurnStarted, VoteCast, VotingClosed, VotingStarted
from core.llm.registry import ModelRegistry
from core.models import TokenUsage
from core.settings import ModelPrice
from core.spec import DebateSpec
from core.token_estimate import estimate_tokens
from tests.core.runs import Run, run_debate
from tests.core.test_budget import FORMATS
from tests.helpers import RecordingSink, make_config

# Sonnet-like list prices for the scripted model: a long turn costs about $0.004, its worst case
# (600 tokens out, the prompt at the cache-write rate) about $0.009.
PRICE = {"input": 2.0, "output": 10.0, "cache_write": 2.5, "cache_read": 0.2}

RESUMED_BUDGET = 0.07

SIZES: dict[str, tuple[float, float, float]] = {
    "arena": (0.01, 0.03, 0.08),
    "oxford": (0.01, 0.03, 0.08),
    "council": (0.01, 0.03, 0.08),
    "panel": (0.01, 0.03, 0.06),
}


async def _run(tmp_path: Path, fmt: str, dollars: float) -> Run:
    given = FORMATS[fmt]
    here = tmp_path / f"{fmt}-{dollars}"
    here.mkdir()
    return await run_debate(
        here,
        fmt=fmt,
        topic=given.get("topic", "Should cities ban cars?"),
        script=given["script"],
        options=given["options"],
        model={"prices": {"scripted": PRICE}},
        limits={"max_cost_per_debate": dollars, "max_tokens_per_debate": 0, "max_rounds": 200},
    )


def _assert_nothing_left_open(run: Run) -> None:
    started = {e.turn_id for e in run.of(TurnStarted)}
    assert started == {t.turn_id for t in run.turns()}
    assert not any(t.interrupted for t in run.turns())
    assert {v.vote_id for v in run.of(VotingStarted)} == {v.vote_id for v in run.of(VotingClosed)}


@pytest.mark.parametrize("fmt", list(SIZES))
async def test_the_cost_budget_is_never_exceeded_and_the_debate_ends_on_it(tmp_path: Path, fmt: str) -> None:
    turns_made: list[int] = []
    for dollars in SIZES[fmt]:
        run = await _run(tmp_path, fmt, dollars)
        assert run.result.reason == "budget", run.result.detail
        [end] = run.of(DebateCompleted)
        shown = f"${dollars:.4f}"
        assert end.detail == run.result.detail == f"the cost budget of {shown} was spent"
        assert shown in end.summary  # the closing card's summary says it too
        # what is recorded (every call's priced usage) stays within the budget
        assert end.stats.tokens.cost_usd <= dollars
        assert math.fsum(u.cost_usd for u in _usages(run)) <= dollars
        _assert_nothing_left_open(run)
        turns_made.append(len(run.turns()))
    # the three sizes bite at three different points of the debate
    assert turns_made == sorted(set(turns_made)), turns_made


def _usages(run: Run) -> list[TokenUsage]:
    return [usage for e in run.stored if isinstance(usage := getattr(e, "usage", None), TokenUsage)]


async def test_calls_made_together_are_reserved_together_or_not_started(tmp_path: Path) -> None:
    # The four council members propose and revise at once, and vote at once: each batch is
    # reserved as a whole, so the debate stops between batches (never within one, which would
    # overshoot the cap by the rest of the batch) and no ballot is opened that cannot be paid for.
    run = await _run(tmp_path, "council", 0.08)
    assert run.result.reason == "budget"
    assert run.turns() and len(run.turns()) % 4 == 0
    assert not run.of(VotingStarted) and not run.of(VoteCast)
    assert run.result.stats.tokens.cost_usd <= 0.08


async def test_the_arena_summary_is_paid_from_its_set_aside(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path,
        options={"exchanges_per_round": 2, "rounds": 1},
        script=FORMATS["arena"]["script"],
        model={"prices": {"scripted": PRICE}},
        limits={"max_cost_per_debate": 0.07, "max_tokens_per_debate": 0},
    )
    assert run.result.reason == "max_rounds"
    [summary] = run.turns("moderator")
    assert run.result.summary == summary.text
    assert run.result.stats.tokens.cost_usd <= 0.07


HAIKU = ModelPrice(input=0.1, output=0.5, cache_write=0.125, cache_read=0.01)
SONNET = ModelPrice(input=2.0, output=10.0, cache_write=2.5, cache_read=0.2)


def _budget_and_models(tmp_path: Path, dollars: float) -> tuple[DebateBudget, ModelRegistry]:
    cfg = make_config(
        tmp_path,
        model={
            "default": "anthropic:claude-sonnet-5-5",
            "ballots": "anthropic:claude-haiku-5-5",
            "prices": {
                "anthropic:claude-sonnet-5-5": SONNET.model_dump(),
                "anthropic:claude-haiku-5-5": HAIKU.model_dump(),
            },
        },
        limits={"max_cost_per_debate": dollars, "max_tokens_per_debate": 0},
    )
    core = cfg.core()
    registry = ModelRegistry(core.model, clock=FakeClock(), anthropic_api_key="sk-test-offline")
    return DebateBudget(core), registry


def test_a_call_reserves_its_worst_cost_at_the_price_of_the_model_it_uses(tmp_path: Path) -> None:
    budget, registry = _budget_and_models(tmp_path, 1.0)
    models = registry.for_debate(seed=1, topic="Should cities ban cars?")
    [ada] = [p for p in budget.settings.personas.values() if p.id == "ada"]
    observer = models.agent(ada, "observer", "vote", "You are Ada.")
    judge = models.agent(ada, "judge", "vote", "You are Ada.")
    assert (observer.price, judge.price) == (HAIKU, SONNET)  # ballots go to the small model
    plan = CallPlan("vote", "You are Ada.", "Vote: keep or replace? " * 40)
    prompt = estimate_tokens(plan.system) + estimate_tokens(plan.prompt) + 64
    # the prompt at the dearest input rate (a cache write), 300 vote tokens out at the output rate
    assert budget.worst_cost(plan, HAIKU) == math.ceil(prompt * 0.125 + 300 * 0.5)
    assert budget.worst_cost(plan, SONNET) == math.ceil(prompt * 2.5 + 300 * 10.0)
    metered = budget.metered([observer, judge], [plan, plan], what="two votes")
    assert budget.money.reserved == budget.worst_cost(plan, HAIKU) + budget.worst_cost(plan, SONNET)
    for agent in metered:
        agent.release()
    assert (budget.money.reserved, budget.money.spent) == (0, 0)


def test_the_cost_ledger_refuses_a_batch_it_cannot_cover_but_not_the_closing_call(tmp_path: Path) -> None:
    budget, registry = _budget_and_models(tmp_path, 0.05)
    models = registry.for_debate(seed=1, topic="Should cities ban cars?")
    personas = list(budget.settings.personas.values())[:4]
    system = "You speak for the motion."
    budget.set_aside_for_closing(system, SONNET)
    reserve = budget.money.held_back
    assert reserve == budget.worst_cost(budget.closing_plan(system), SONNET) > 0
    speakers = [models.agent(p, "proposition", "turn", system) for p in personas]
    plan = CallPlan("turn", system, "Make your case. " * 200)
    each = budget.worst_cost(plan, SONNET)
    fits = (budget.money.ceiling - reserve) // each
    assert 0 < fits < len(speakers)
    with pytest.raises(BudgetExhausted, match=r"the cost budget of \$0\.0500 cannot cover") as refused:
        budget.metered(speakers, [plan] * len(speakers), what="four turns at once")
    assert refused.value.budget == "cost" and budget.money.reserved == 0  # all or nothing
    made = budget.metered(speakers[:fits], [plan] * fits, what="the turns that fit")
    for agent in made:
        agent.release()
    # the closing call may use the reserve that ordinary calls may not
    closing = budget.reserve([budget.closing_plan(system)], [SONNET], what="the summary", closing=True)
    closing[0].settle(TokenUsage(output_tokens=900, cost_usd=900 * 10.0 / MICRO))
    assert budget.money.spent == 9000


async def test_a_resumed_debate_does_not_pay_twice_for_what_it_replays(tmp_path: Path) -> None:
    from tests.core.test_resume import OPTIONS, TOPIC, events_of, figures, resume, run_until, spoken

    spec = DebateSpec("arena", TOPIC, {**OPTIONS, "rounds": 6})

    def config(where: Path) -> Config:
        where.mkdir()
        return make_config(
            where,
            model={"latency": 0.5, "prices": {"scripted": PRICE}},
            limits={"max_cost_per_debate": RESUMED_BUDGET, "max_tokens_per_debate": 0},
        )

    whole_config = config(tmp_path / "whole")
    async with Runtime(whole_config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(spec, RecordingSink(), seed=4)
        assert (await handle.wait()).reason == "budget"
        whole = await rt.store.events(handle.debate_id)

    cut_config = config(tmp_path / "cut")
    fifth_turn_done = lambda e: isinstance(e, TurnCompleted) and e.turn_id == "t5"  # noqa: E731
    debate_id = await run_until(cut_config, spec, fifth_turn_done)
    [_], [result] = await resume(cut_config, RecordingSink())
    after, _ = await events_of(cut_config, debate_id)
    # the calls replayed from the log count once: the budget runs out at the same point
    assert result.reason == "budget"
    assert result.detail == f"the cost budget of ${RESUMED_BUDGET:.4f} was spent"
    assert spoken(after) == spoken(whole) and len(spoken(after)) > 5
    assert figures(after) == figures(whole)
    assert result.stats.tokens.cost_usd <= RESUMED_BUDGET


def test_a_cost_budget_below_a_millionth_of_a_dollar_is_still_a_ceiling(tmp_path: Path) -> None:
    budget, _ = _budget_and_models(tmp_path, 1e-9)
    assert budget.money.limited and budget.money.ceiling == 1
    with pytest.raises(BudgetExhausted):
        budget.reserve([CallPlan("vote", "", "Vote.")], [HAIKU], what="a vote")
