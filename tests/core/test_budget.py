"""The token budget is a hard ceiling: every format, at 2k, 5k and 12k tokens, never spends more
than its budget (the closing reserve included) and ends with the budget reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.budget import BudgetExhausted, Ledger
from core.events import DebateCompleted, TurnStarted, VotingClosed, VotingStarted
from tests.core.runs import run_debate
from tests.core.test_panel import CLIMATE, QUESTION, TRANSPORT

LONG_TURN = "Streets are for people. " * 40  # ~240 tokens a turn, so the budgets bite within a few rounds

FORMATS: dict[str, dict[str, Any]] = {
    "arena": {
        "options": {"exchanges_per_round": 2, "duration": 7200},
        "script": {
            "proposition": [LONG_TURN],
            "opposition": [LONG_TURN],
            "observer": [{"vote": "keep", "reason": "Clear."}],
            "moderator": [LONG_TURN],
        },
    },
    "oxford": {
        "options": {"rounds": 10},
        "script": {
            "proposer": [LONG_TURN],
            "critic": [LONG_TURN],
            "moderator": [LONG_TURN],
            "judge": [{"decision": "continue", "reasoning": "Go on."}],
        },
    },
    "council": {"options": {"rounds": 5, "humans": "off"}, "script": {"council": [LONG_TURN]}},
    "panel": {
        "options": {"documents": [CLIMATE, TRANSPORT], "rounds": 5},
        "script": {"panellist": [LONG_TURN], "synthesiser": [LONG_TURN]},
        "topic": QUESTION,
    },
}


@pytest.mark.parametrize("budget", [2000, 5000, 12000])
@pytest.mark.parametrize("fmt", list(FORMATS))
async def test_the_budget_is_never_exceeded_and_the_debate_ends_on_it(
    tmp_path: Path, fmt: str, budget: int
) -> None:
    given = FORMATS[fmt]
    run = await run_debate(
        tmp_path,
        fmt=fmt,
        topic=given.get("topic", "Should cities ban cars?"),
        script=given["script"],
        options=given["options"],
        limits={"max_tokens_per_debate": budget, "max_rounds": 200},
    )
    assert run.result.reason == "budget", run.result.detail
    assert run.result.stats.tokens.total <= budget
    [end] = run.of(DebateCompleted)
    assert end.reason == "budget" and "token budget" in end.detail
    assert end.stats.tokens.total <= budget
    # every turn that was started was finished: nothing is left hanging by a refused call
    started = {e.turn_id for e in run.of(TurnStarted)}
    assert started == {t.turn_id for t in run.turns()}
    assert not any(t.interrupted for t in run.turns())
    assert {v.vote_id for v in run.of(VotingStarted)} == {v.vote_id for v in run.of(VotingClosed)}


async def test_oxford_honours_the_configured_round_cap(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path,
        fmt="oxford",
        script=FORMATS["oxford"]["script"],
        limits={"max_rounds": 2, "max_tokens_per_debate": 0},
    )
    assert max(t.round for t in run.turns()) == 2
    assert run.result.reason == "completed"


async def test_oxford_refuses_more_rounds_than_the_cap(tmp_path: Path) -> None:
    from core.errors import SpecError

    with pytest.raises(SpecError, match="rounds must be at most 2"):
        await run_debate(tmp_path, fmt="oxford", options={"rounds": 5}, limits={"max_rounds": 2})


def test_a_ledger_reserves_all_or_nothing_and_keeps_the_closing_reserve() -> None:
    ledger = Ledger(1000)
    ledger.hold_back(300)
    first, second = ledger.reserve_all([300, 300], what="two votes")
    with pytest.raises(BudgetExhausted, match="cannot cover a third"):
        ledger.reserve(200, what="a third")  # 1000 - 600 reserved - 300 held back = 100 left
    first.settle(120)
    second.release()
    assert (ledger.spent, ledger.reserved) == (120, 0)
    with pytest.raises(BudgetExhausted):
        ledger.reserve_all([300, 300], what="two more")  # 580 free of the reserve: not both
    assert ledger.reserved == 0  # nothing was reserved by the refused pair
    closing = ledger.reserve(880, what="the summary", closing=True)  # the reserve is for this
    closing.settle(880)
    assert ledger.spent == 1000
