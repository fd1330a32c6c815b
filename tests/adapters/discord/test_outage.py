"""Discord down for a while (502s on the webhook, discord.py's own retries spent): the debate
pauses, probes Discord, and once it answers again shows every final text it owed, in order, with
no half-written message (▌) left; a webhook deleted mid-turn is recreated and the half-written
message replaced."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from adapters.delivery import outage
from core.events import DebateCompleted, Notice, TurnCompleted, VotingClosed
from core.replay import CARD_NOT_SHOWN_CODE
from testkit.discord_world import Arena, Running, arena
from tests.adapters.discord.loopback import compress_discord_py_waits

SCALE = 0.02
"""Time compressed: discord.py's retry waits, the outage and Rostra's probing run 50 times faster."""
CURSOR = "▌"
WEBHOOK_POST = r"/webhooks/\d+/[^/]+"
WEBHOOK_EDIT = r"/webhooks/\d+/[^/]+/messages/\d+"
LONG_TURNS: dict[str, Any] = {
    "proposition": [" ".join(f"pro{i}" for i in range(60)), " ".join(f"again{i}" for i in range(60))],
    "opposition": [" ".join(f"con{i}" for i in range(60)), " ".join(f"back{i}" for i in range(60))],
    "observer": [{"vote": "keep", "reason": "Fine."}],
    "moderator": ["Both sides spoke."],
}


@pytest.fixture(autouse=True)
def compressed(monkeypatch: pytest.MonkeyPatch) -> None:
    compress_discord_py_waits(monkeypatch, factor=SCALE)
    limits = outage.OutageLimits(limit=600 * SCALE, first_probe=2 * SCALE, longest_probe=30 * SCALE)
    monkeypatch.setattr(outage, "DEFAULT_LIMITS", limits)


def thread_texts(world: Arena, thread_id: int) -> list[str]:
    return [str(m["content"] or "") for m in world.lb.api.in_channel(thread_id)]


async def assert_every_turn_shown_once(world: Arena, debate_id: str, thread_id: int) -> None:
    events = await world.rt.store.events(debate_id)
    assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "max_rounds"
    texts = thread_texts(world, thread_id)
    done = [e for e in events if isinstance(e, TurnCompleted)]
    assert len(done) == 5
    for turn in done:  # not lost, not doubled
        assert sum(turn.text.split()[0] in text.split() for text in texts) == 1, turn.text
    assert not any(CURSOR in text for text in texts)
    assert not any("Discord refused" in text for text in texts)


async def test_a_150_s_outage_of_502s_loses_no_final_text_and_leaves_no_cursor(tmp_path: Path) -> None:
    async with arena(tmp_path, script=LONG_TURNS, model={"latency": 0.01}) as world:
        api = world.lb.api
        api.fail("POST", WEBHOOK_POST, status=502, for_seconds=150 * SCALE)
        api.fail("PATCH", WEBHOOK_EDIT, status=502, for_seconds=150 * SCALE)
        ran = await world.run()
        await assert_every_turn_shown_once(world, ran.handle.debate_id, ran.thread.id)
        assert any(r.status == 502 for r in api.requests)  # the outage did hit the debate


async def test_a_webhook_deleted_mid_turn_leaves_no_half_written_message(tmp_path: Path) -> None:
    async with arena(tmp_path, script=LONG_TURNS, model={"latency": 0.02}) as world:
        api = world.lb.api
        ran = await world.start()

        def half_written() -> bool:
            return any(CURSOR in text for text in thread_texts(world, ran.thread.id))

        await api.wait_until(half_written)
        [hook_id] = list(api.webhooks)
        api.delete_webhook(hook_id)
        await ran.handle.wait()
        await ran.sink.finish()
        await assert_every_turn_shown_once(world, ran.handle.debate_id, ran.thread.id)
        assert len(api.webhooks) == 1 and hook_id not in api.webhooks  # recreated


async def test_a_429_that_outlasts_discord_py_is_waited_out_and_leaves_no_cursor(tmp_path: Path) -> None:
    """A turn's edits answered 429 past what discord.py retries (here without the `Via` header, which
    it does not retry at all): the turn's final text waits it out as in an outage and replaces the
    half-written message; no "Discord refused" notice."""
    async with arena(tmp_path, script=LONG_TURNS, model={"latency": 0.02}) as world:
        api = world.lb.api
        ran = await world.start()
        await api.wait_until(lambda: any(CURSOR in text for text in thread_texts(world, ran.thread.id)))
        api.fail(
            "PATCH", WEBHOOK_EDIT, status=429, message="You are being rate limited.", for_seconds=60 * SCALE
        )
        await ran.handle.wait()
        await ran.sink.finish()
        await assert_every_turn_shown_once(world, ran.handle.debate_id, ran.thread.id)
        assert any(r.status == 429 for r in api.requests)  # the refusals did hit the debate


@pytest.mark.slow
async def test_a_window_whose_card_waited_out_the_outage_counts_peoples_votes(tmp_path: Path) -> None:
    """The outage begins before the vote card can be shown: the card goes out owed once Discord
    answers, and only then does the people's window start, so their votes count."""
    async with arena(tmp_path, script=LONG_TURNS, model={"latency": 0.01}) as world:
        api = world.lb.api
        api.fail("POST", WEBHOOK_POST, status=502, for_seconds=150 * SCALE)
        api.fail("PATCH", WEBHOOK_EDIT, status=502, for_seconds=150 * SCALE)
        running = await world.start(humans="vote", human_window=5.0)
        people = asyncio.create_task(react_when_open(world, running))
        await running.handle.wait()
        await running.sink.finish()
        await people
        events = await world.rt.store.events(running.handle.debate_id)
        texts = thread_texts(world, running.thread.id)
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 2, "replace": 0}
    assert not any(isinstance(e, Notice) and e.code == CARD_NOT_SHOWN_CODE for e in events)
    assert not any(CURSOR in text for text in texts)


async def react_when_open(world: Arena, running: Running) -> None:
    """Two people react ✅ on the vote card once its window is open."""
    handle = running.handle
    while not handle.done:
        open_votes = [v for v in handle.state.ballots if handle.human_vote_open(v)]
        for message in world.lb.api.in_channel(running.thread.id):
            card = world.cards.get(int(message["id"]))
            if card is not None and card.vote_id in open_votes:
                await card.reacted("901", "alice", "✅")
                await card.reacted("902", "bob", "✅")
                return
        await asyncio.sleep(0.02)
