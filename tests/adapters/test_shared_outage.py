"""Debates that share a route (a Discord channel's one persona webhook) share its outages: when one
debate's final state keeps failing, the others pause at once (no model calls while their own
requests wait behind its retries), go on when one gets through, and stop with it past the limit."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any, cast

import pytest

from adapters.delivery.outage import OutageLimits, PlatformOutage, SharedRoute
from core.session import DebateHandle


class Down(Exception):
    """A 502 that outlasted the client's own retries."""


class Handle:
    """What a front end tells a debate about its platform, as the debate hears it."""

    def __init__(self) -> None:
        self.told: list[str] = []
        self.done = False

    def platform_down(self, reason: str) -> None:
        self.told.append("down")

    def platform_back(self) -> None:
        self.told.append("back")

    def platform_lost(self, reason: str) -> None:
        self.told.append("lost")


def debate(route: SharedRoute, limit: float = 60.0) -> tuple[PlatformOutage, list[str]]:
    """One debate's view of the shared route, and what its debate was told."""
    outage = PlatformOutage(
        "Discord", OutageLimits(limit=limit, first_probe=0.01, longest_probe=0.01), shared=route
    )
    handle = Handle()
    outage.attach(cast(DebateHandle, handle))
    return outage, handle.told


def failing_for(calls: int) -> Any:
    left = [calls]

    async def attempt() -> str:
        if left[0] > 0:
            left[0] -= 1
            raise Down
        return "shown"

    return attempt


def is_down(exc: BaseException) -> bool:
    return isinstance(exc, Down)


async def test_one_debate_finding_the_webhook_down_pauses_the_others_until_it_gets_through() -> None:
    route = SharedRoute()
    (a, told_a), (b, told_b) = debate(route), debate(route)
    assert await a.carry(failing_for(3), is_down) == "shown"
    assert told_a == ["down", "back"]
    assert told_b == ["down", "back"]  # paused with it, though its own request never failed
    assert not b.down


async def test_a_paused_debate_whose_own_request_fails_goes_on_only_when_that_request_gets_through() -> None:
    route = SharedRoute()
    (a, told_a), (b, told_b) = debate(route), debate(route)
    a_through, b_through = asyncio.Event(), asyncio.Event()

    def until(through: asyncio.Event) -> Any:
        async def attempt() -> str:
            if not through.is_set():
                raise Down
            return "shown"

        return attempt

    a_probing = asyncio.create_task(a.carry(until(a_through), is_down))
    await wait_for(lambda: told_b == ["down"])
    b_probing = asyncio.create_task(b.carry(until(b_through), is_down))  # its own final fails too
    await asyncio.sleep(0.05)
    a_through.set()
    assert await a_probing == "shown"
    assert told_a == ["down", "back"]
    await asyncio.sleep(0.05)
    assert told_b == ["down"] and b.down  # a got through, b's own request still fails
    b_through.set()
    assert await b_probing == "shown"
    assert told_b == ["down", "back"]


async def wait_for(condition: Any) -> None:
    async with asyncio.timeout(2):
        while not condition():  # noqa: ASYNC110 - what it waits on is a plain list
            await asyncio.sleep(0.005)


async def test_past_the_limit_every_debate_paused_by_it_stops() -> None:
    route = SharedRoute()
    (a, told_a), (b, told_b) = debate(route, limit=0.05), debate(route, limit=0.05)

    async def never() -> str:
        raise Down

    with pytest.raises(Down):
        await a.carry(never, is_down)
    assert told_a == ["down", "lost"]
    assert told_b == ["down", "lost"]
    assert b.lost


async def test_a_debate_that_stops_delivering_while_probing_lets_the_others_go_on() -> None:
    route = SharedRoute()
    (a, _), (_, told_b) = debate(route), debate(route)
    probing = asyncio.create_task(a.carry(failing_for(10_000), is_down))
    await wait_for(lambda: "down" in told_b)
    a.leave()  # its debate was stopped: nobody probes for b any more
    probing.cancel()
    assert told_b == ["down", "back"]  # b goes on, and finds out for itself if it is still down


async def test_a_finished_debate_is_not_kept_by_the_route() -> None:
    route = SharedRoute()
    (a, _), (b, told_b) = debate(route), debate(route)
    gone = weakref.ref(b)
    del b
    gc.collect()
    assert gone() is None  # the route holds no finished debate (nor its session) alive
    await a.carry(failing_for(1), is_down)
    assert told_b == []
