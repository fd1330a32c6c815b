"""Rate budgets: finals wait their turn, interim states go only with room to spare, a 429 pauses the
whole budget (the clock is the test's)."""

from __future__ import annotations

import asyncio

from adapters.delivery.rates import Budget, Budgets


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_interim_states_leave_room_for_finals() -> None:
    clock = Clock()
    budget = Budget(10, 60.0, now=clock)
    assert [budget.try_take() for _ in range(8)] == [True] * 6 + [False] * 2  # 40 % kept for finals
    for _ in range(4):
        budget.note()  # finals still go
    assert budget.try_take() is False
    clock.t += 60.0  # the window slides on
    assert budget.try_take() is True
    assert (budget.taken, budget.skipped) == (11, 3)


async def test_a_final_waits_for_a_free_call_and_for_a_pause() -> None:
    budget = Budget(2, 0.2)
    budget.note()
    budget.note()
    started = asyncio.get_running_loop().time()
    await budget.take()  # the window is full: waits until the oldest call leaves it
    assert asyncio.get_running_loop().time() - started >= 0.19
    budget.pause(0.2)
    assert budget.try_take(spare=0) is False
    started = asyncio.get_running_loop().time()
    await budget.take()
    assert asyncio.get_running_loop().time() - started >= 0.19


def test_budgets_are_shared_by_name() -> None:
    budgets = Budgets(lambda name: (5, 2.0) if name.startswith("webhook") else (50, 1.0))
    assert budgets["webhook:1"] is budgets["webhook:1"]
    assert (budgets["webhook:1"].limit, budgets["global"].limit) == (5, 50)
