"""Rate windows: finals wait their turn, interim states go only with room to spare, a 429 pauses the
whole window (the clock is the test's)."""

from __future__ import annotations

import asyncio

from adapters.delivery.rates import RateWindow, RateWindows


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_interim_states_leave_room_for_finals() -> None:
    clock = Clock()
    window = RateWindow(10, 60.0, now=clock)
    assert [window.try_take() for _ in range(8)] == [True] * 6 + [False] * 2  # 40 % kept for finals
    for _ in range(4):
        window.note()  # finals still go
    assert window.try_take() is False
    clock.t += 60.0  # the window slides on
    assert window.try_take() is True
    assert (window.taken, window.skipped) == (11, 3)


async def test_a_final_waits_for_a_free_call_and_for_a_pause() -> None:
    window = RateWindow(2, 0.2)
    window.note()
    window.note()
    started = asyncio.get_running_loop().time()
    await window.take()  # the window is full: waits until the oldest call leaves it
    assert asyncio.get_running_loop().time() - started >= 0.19
    window.pause(0.2)
    assert window.try_take(spare=0) is False
    started = asyncio.get_running_loop().time()
    await window.take()
    assert asyncio.get_running_loop().time() - started >= 0.19


def test_budgets_are_shared_by_name() -> None:
    rates = RateWindows(lambda name: (5, 2.0) if name.startswith("webhook") else (50, 1.0))
    assert rates["webhook:1"] is rates["webhook:1"]
    assert (rates["webhook:1"].limit, rates["global"].limit) == (5, 50)


async def test_a_held_call_counts_from_when_its_request_was_done() -> None:
    """A call the SDK makes late inside a multi-step request (Slack's upload completion) is counted
    from the end of the step, since the platform counts it when it arrives, not when it was taken."""
    clock = Clock()
    window = RateWindow(1, 10.0, now=clock)
    async with window.held():
        clock.t += 8.0  # the request took 8 s to reach the platform
    clock.t += 3.0  # 11 s after the take, 3 s after the request arrived
    assert window.try_take(spare=0) is False  # the platform would still count that request
    clock.t += 7.0
    assert window.try_take(spare=0) is True
