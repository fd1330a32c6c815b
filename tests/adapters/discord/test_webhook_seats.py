"""Several debates in one channel: up to four share a persona webhook, then the channel gets
another, so that 20 debates are not all queued behind one webhook's 5 requests per 2 s. A debate
keeps its webhook (only that webhook can edit its messages), also after a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from adapters.discord.delivery.sender import WEBHOOK_KEY
from adapters.discord.delivery.webhooks import SEAT_KEY, SEAT_SHARE, SEATS, PersonaWebhooks, seats_taken
from bot.runtime import Runtime
from core.clock import RealClock
from core.events import DebateCompleted
from testkit.discord_rest import Limits
from testkit.discord_world import Arena, arena, loopback


def test_debates_fill_a_webhook_before_the_next_and_then_spread() -> None:
    hooks = PersonaWebhooks("Rostra")
    seats = [hooks.seat(7) for _ in range(SEAT_SHARE * SEATS + 2)]
    assert seats[: SEAT_SHARE + 1] == [0] * SEAT_SHARE + [1]
    assert seats[: SEAT_SHARE * SEATS] == sorted(seats[: SEAT_SHARE * SEATS])
    assert seats[SEAT_SHARE * SEATS :] == [0, 1]  # all full: the least used
    hooks.leave(7, 3)
    assert hooks.seat(7) == 3
    assert hooks.seat(8) == 0  # another channel has its own
    assert hooks.seat(7, 2) == 2  # a resumed debate gets its webhook back
    assert hooks.seat(7, 99) == 3  # a stored seat the pool no longer has: the least used


async def test_five_debates_in_one_channel_speak_through_two_webhooks(tmp_path: Path) -> None:
    async with arena(tmp_path) as world:
        runs = [await world.start(f"Should city {i} ban cars?") for i in range(SEAT_SHARE + 1)]
        for run in runs:
            await run.handle.wait()
            await run.sink.finish()

        api = world.lb.api
        by_name = {h["name"]: h["id"] for h in api.webhooks.values()}
        assert sorted(by_name) == ["Rostra", "Rostra 2"]
        used = [{m["webhook_id"] for m in api.in_channel(r.thread.id) if m.get("webhook_id")} for r in runs]
        assert used == [{by_name["Rostra"]}] * SEAT_SHARE + [{by_name["Rostra 2"]}]
        for run in runs:
            events = await world.rt.store.events(run.handle.debate_id)
            assert isinstance(events[-1], DebateCompleted)
            values = await world.rt.store.binding_values(run.handle.debate_id)
            assert values[WEBHOOK_KEY] in used[runs.index(run)]
        last = await world.rt.store.binding_values(runs[-1].handle.debate_id)
        assert last[SEAT_KEY] == "1"  # what a restart reads to give it the same webhook again


async def test_the_second_webhook_is_found_again_after_a_restart() -> None:
    async with loopback() as lb:
        first = await PersonaWebhooks("Rostra").get(lb.channel, lb.owner_id, 1)
        again = await PersonaWebhooks("Rostra").get(lb.channel, lb.owner_id, 1)
        assert (first.id, first.name) == (again.id, "Rostra 2")
        assert len(lb.api.webhooks) == 1


async def test_a_channel_with_no_room_for_another_webhook_shares_the_first() -> None:
    async with loopback(Limits(webhooks_per_channel=1)) as lb:
        hooks = PersonaWebhooks("Rostra")
        first = await hooks.get(lb.channel, lb.owner_id, 0)
        second = await hooks.get(lb.channel, lb.owner_id, 1)
        assert second.id == first.id
        asked = len(lb.api.requests)
        assert (await hooks.get(lb.channel, lb.owner_id, 1)).id == first.id
        assert len(lb.api.requests) == asked  # not asked for again at every post
        refused = [r for r in lb.api.requests if r.method == "POST" and r.path.endswith("/webhooks")]
        assert [r.status for r in refused] == [200, 400]


@pytest.mark.slow
async def test_twenty_debates_in_one_channel_use_five_webhooks_and_all_finish(tmp_path: Path) -> None:
    async with arena(tmp_path) as world:
        runs = await asyncio.gather(*(world.start(f"Should city {i} ban cars?") for i in range(20)))
        for run in runs:
            await run.handle.wait()
            await run.sink.finish()
        api = world.lb.api
        names = sorted(h["name"] for h in api.webhooks.values())
        assert names == ["Rostra"] + [f"Rostra {i}" for i in range(2, SEATS + 1)]
        for run in runs:
            events = await world.rt.store.events(run.handle.debate_id)
            assert isinstance(events[-1], DebateCompleted)
            assert not any("▌" in str(m["content"] or "") for m in api.in_channel(run.thread.id))


async def test_a_second_worker_puts_its_debate_on_the_webhook_the_first_workers_debates_left_free(
    tmp_path: Path,
) -> None:
    """Two workers on one database, one channel: the seats are counted in the store, so the second
    worker's debate does not pile onto the webhook the first worker's four already share."""
    async with arena(tmp_path) as first, Runtime(first.rt.config, clock=RealClock()) as other_rt:
        second = Arena(first.lb, other_rt, PersonaWebhooks("Rostra"))
        runs = [await first.start(f"Should city {i} ban cars?") for i in range(SEAT_SHARE)]
        thread = runs[0].thread  # the channel's webhooks, counted from the store
        for _ in range(200):  # each debate's seat is stored as its opening is delivered
            if sum((await seats_taken(other_rt.store, thread)).values()) == SEAT_SHARE:
                break
            await asyncio.sleep(0.02)
        assert await seats_taken(other_rt.store, thread) == {"0": SEAT_SHARE}
        late = await second.start("Should towns ban cars?")
        for run in [*runs, late]:
            await run.handle.wait()
            await run.sink.finish()

        api = first.lb.api
        by_name = {h["name"]: h["id"] for h in api.webhooks.values()}
        spoke = {m["webhook_id"] for m in api.in_channel(late.thread.id) if m.get("webhook_id")}
        assert spoke == {by_name["Rostra 2"]}
        assert (await other_rt.store.binding_values(late.handle.debate_id))[SEAT_KEY] == "1"
        assert await seats_taken(other_rt.store, thread) == {}  # all ended: no seat taken
