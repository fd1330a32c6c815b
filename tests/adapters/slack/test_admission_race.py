"""Limits under concurrency: simultaneous starts through the real app's HTTP endpoint against a cap
of 1 and a cooldown start exactly one debate."""

from __future__ import annotations

import asyncio
from pathlib import Path

from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, BOB, CAROL, DAN, ERIN, SLOW_FIRST_TURN, open_harness

CHANNELS = ["C0ONE", "C0TWO", "C0THREE", "C0FOUR", "C0FIVE"]


async def test_simultaneous_slash_starts_against_a_cap_of_one_start_one_debate(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(
        tmp_path, api, script=SLOW_FIRST_TURN, clock=clock, limits={"max_debates_per_scope": 1}
    ) as slack:
        people = [ALICE, BOB, CAROL, DAN, ERIN]
        replies = await asyncio.gather(
            *(
                slack.slash(f"Should town {i} ban cars?", user=user, channel=channel)
                for i, (user, channel) in enumerate(zip(people, CHANNELS, strict=True))
            )
        )
        await api.wait_until(lambda: clock.waiting == 1)
        assert all(r.status == 200 for r in replies)
        assert len(await slack.rt.store.list_debates()) == 1
        assert sum(len(api.top_level(c)) for c in CHANNELS) == 1
        texts = [r.body["text"] for r in replies] + [r["text"] for r in api.responses]
        assert sum("debates running (the limit is 1)" in t for t in texts) == 4
        await clock.release()
        await slack.settle()


async def test_simultaneous_mentions_by_one_person_start_one_debate_within_the_cooldown(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(
        tmp_path, api, script=SLOW_FIRST_TURN, clock=clock, limits={"user_cooldown": 60}
    ) as slack:
        await asyncio.gather(*(slack.mention("debate Should cities ban cars?", channel=c) for c in CHANNELS))
        await api.wait_until(lambda: len(slack.ephemerals_to(ALICE)) == 4)
        await api.wait_until(lambda: clock.waiting == 1)
        assert all("You started a debate moments ago" in t for t in slack.ephemerals_to(ALICE))
        assert len(await slack.rt.store.list_debates()) == 1
        assert sum(len(api.top_level(c)) for c in CHANNELS) == 1
        await clock.release()
        await slack.settle()


async def test_a_start_that_fails_gives_the_slot_and_the_cooldown_back(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with open_harness(tmp_path, api, limits={"user_cooldown": 60}) as slack:
        api.fail_next("chat.postMessage", status=200, error="channel_not_found")
        await slack.mention("debate Should cities ban cars?")
        assert "channel_not_found" in await slack.told(ALICE)
        await api.wait_until(lambda: slack.rt.admission.pending() == 0)
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        await slack.settle()
        assert len(await slack.rt.store.list_debates()) == 1
