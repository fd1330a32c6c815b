"""A window waits for its card to show ballot and countdown (the front end's report) for a limited
time, and the time its platform is down does not count: after an outage the card goes out owed, and
the window opens with it instead of having gone on without people."""

from __future__ import annotations

import asyncio

import pytest

from core import voting
from core.voting import CardsShown


@pytest.fixture(autouse=True)
def short_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(voting, "WAIT_STEP", 0.05)


async def test_a_card_not_reported_in_time_is_not_shown() -> None:
    assert await CardsShown().wait("v1", within=0.2) is False


async def test_a_reported_card_is_shown_at_once() -> None:
    cards = CardsShown()
    waiting = asyncio.create_task(cards.wait("v1", within=5))
    await asyncio.sleep(0.1)
    cards.report("v1", True)
    assert await asyncio.wait_for(waiting, 1) is True


async def test_the_wait_does_not_run_down_while_the_platform_is_down() -> None:
    down = [True]
    cards = CardsShown(lambda: down[0])
    waiting = asyncio.create_task(cards.wait("v1", within=0.2))
    await asyncio.sleep(0.6)  # three times the wait, all of it down
    assert not waiting.done()
    down[0] = False  # back: the card goes out, and is reported
    cards.report("v1", True)
    assert await asyncio.wait_for(waiting, 1) is True


async def test_the_wait_does_not_run_down_while_earlier_events_are_still_being_delivered() -> None:
    """The card is queued behind other events (a shared webhook's backlog): it is owed, not refused;
    once the front end has shown the events before it, the wait runs."""
    cards = CardsShown()
    waiting = asyncio.create_task(cards.wait("v1", within=0.2, after=33))
    cards.delivered(30)
    await asyncio.sleep(0.6)  # three times the wait, with the front end still behind the card
    assert not waiting.done()
    cards.delivered(33)  # the front end works on the card now; it never reports it
    assert await asyncio.wait_for(waiting, 1) is False


async def test_the_wait_has_a_limit_in_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(voting, "CARD_WAIT_LIMIT", 0.3)
    cards = CardsShown(lambda: True)  # down for good, as far as this debate can tell
    assert await asyncio.wait_for(cards.wait("v1", within=60), 2) is False
