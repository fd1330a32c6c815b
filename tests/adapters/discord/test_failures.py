"""Delivery under Discord's real failures, through discord.py's own HTTP client and retries (the
loopback REST fake): posts that land but answer 502, persistent 5xx, Cloudflare 429s, threads that
vanish mid-debate."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from adapters.delivery import outage
from core.events import DebateCompleted, HumanVoteOpened, Notice, TurnCompleted, TurnStarted, VotingClosed
from testkit.discord_rest import Limits
from testkit.discord_world import Arena, arena
from tests.adapters.discord.loopback import compress_discord_py_waits

WEBHOOK_POST = r"/webhooks/\d+/[^/]+"


def spoken(world: Arena, thread_id: int) -> list[tuple[str, str]]:
    """The persona messages the thread shows now: (persona, text), oldest first."""
    return [
        (m["author"]["username"], m["content"])
        for m in world.lb.api.in_channel(thread_id)
        if m.get("webhook_id")
    ]


async def turns(world: Arena, debate_id: str) -> list[TurnCompleted]:
    return [e for e in await world.rt.store.events(debate_id) if isinstance(e, TurnCompleted)]


def notices(world: Arena, thread_id: int, saying: str = "Discord refused") -> list[str]:
    return [m["content"] for m in world.lb.api.in_channel(thread_id) if saying in m["content"]]


async def test_a_500_is_retried_by_discord_py_alone_and_the_turn_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compress_discord_py_waits(monkeypatch)
    async with arena(tmp_path) as world:
        world.lb.api.fail("POST", WEBHOOK_POST, status=500, times=1)
        ran = await world.run()
        done = await turns(world, ran.handle.debate_id)
        assert [name for name, _ in spoken(world, ran.thread.id)] == [t.speaker.name for t in done]
        statuses = [p.status for p in world.lb.api.sent("POST", WEBHOOK_POST)]
        assert statuses == [500] + [200] * len(done)  # one retry, discord.py's
        assert notices(world, ran.thread.id) == []


async def test_a_persona_post_stored_but_answered_502_shows_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compress_discord_py_waits(monkeypatch, factor=1.0)  # the real 1 s wait before discord.py retries
    async with arena(tmp_path) as world:
        world.lb.api.fail("POST", WEBHOOK_POST, status=502, after_store=True)
        ran = await world.run()
        done = await turns(world, ran.handle.debate_id)
        shown = spoken(world, ran.thread.id)
        assert [name for name, _ in shown] == [t.speaker.name for t in done]
        assert all(t.text in text for t, (_, text) in zip(done, shown, strict=True))
        assert len(world.lb.api.sent("POST", WEBHOOK_POST)) == len(done) + 1  # discord.py's one retry
        assert notices(world, ran.thread.id) == []


async def test_a_card_stored_but_answered_502_shows_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compress_discord_py_waits(monkeypatch)
    async with arena(tmp_path) as world:
        thread_posts = r"/channels/\d+/messages"
        world.lb.api.fail("POST", thread_posts, status=502, after_store=True)  # the opening card
        ran = await world.run()
        titles = [
            (m["embeds"][0].get("title") or "") for m in world.lb.api.in_channel(ran.thread.id) if m["embeds"]
        ]
        assert len(titles) == len(set(titles))  # the nonce: Discord returned the first, no second card
        first, retried = world.lb.api.sent("POST", thread_posts)[:2]
        assert first.body["nonce"] == retried.body["nonce"] and retried.body["enforce_nonce"] is True


async def test_a_persistent_5xx_pauses_the_debate_then_stops_it_resumable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compress_discord_py_waits(monkeypatch)
    limit = outage.OutageLimits(limit=1.0, first_probe=0.05, longest_probe=0.4)  # 600 s, compressed
    monkeypatch.setattr(outage, "DEFAULT_LIMITS", limit)
    script: dict[str, Any] = {
        "proposition": [" ".join(f"word{i}" for i in range(120))],
        "opposition": ["Short and sharp."],
        "observer": [{"vote": "keep", "reason": "Fine."}],
        "moderator": ["Both sides spoke."],
    }
    fast = Limits(webhook=(5, 2.0 * 0.02), channel=(5, 5.0 * 0.02))  # Discord's limits, time compressed
    async with arena(tmp_path, script=script, model={"latency": 0.02}, rest=fast) as world:
        world.lb.api.fail("POST", WEBHOOK_POST, status=503, message="Down", times=None)
        ran = await world.run()
        events = await world.rt.store.events(ran.handle.debate_id)
        assert not any(isinstance(e, DebateCompleted) for e in events)  # not run on to an end unseen
        record = await world.rt.store.get_debate(ran.handle.debate_id)
        assert record is not None and record.status == "interrupted"  # resumable
        attempts = len(world.lb.api.sent("POST", WEBHOOK_POST))
        # discord.py tries each call 5 times; the probes back off (0.05 s doubling, capped at 0.4 s)
        assert attempts <= 5 * 20
        [stopped] = [e for e in events if isinstance(e, Notice) and e.code == "platform_unavailable"]
        assert "Discord was unavailable" in stopped.message  # said once, stored in order
        assert spoken(world, ran.thread.id) == []


async def test_a_cloudflare_429_is_not_retried(tmp_path: Path) -> None:
    async with arena(tmp_path) as world:
        world.lb.api.fail("POST", WEBHOOK_POST, status=429, cloudflare=True)
        ran = await world.run()
        done = await turns(world, ran.handle.debate_id)
        posts = world.lb.api.sent("POST", WEBHOOK_POST)
        # The refused first (interim) post is neither retried by discord.py nor by Rostra: the turn's
        # final text is the next post, and every turn shows once.
        assert [p.status for p in posts] == [429] + [200] * len(done)
        assert posts[0].body["content"].endswith("▌") and done[0].text in posts[1].body["content"]
        assert [name for name, _ in spoken(world, ran.thread.id)] == [t.speaker.name for t in done]
        assert notices(world, ran.thread.id) == []


async def test_refused_turns_are_said_in_one_notice_and_the_debate_goes_on(tmp_path: Path) -> None:
    async with arena(tmp_path, discord={"streaming": False}) as world:
        world.lb.api.fail("POST", WEBHOOK_POST, status=400, code=50035, message="Invalid Form Body", times=2)
        ran = await world.run()
        done = await turns(world, ran.handle.debate_id)
        shown = [name for name, _ in spoken(world, ran.thread.id)]
        assert shown == [t.speaker.name for t in done[2:]]  # the first two turns are missing
        assert notices(world, ran.thread.id) == [
            "⚠️ Discord refused 2 messages or edits (the last: HTTP 400), so part of the debate is"
            " missing here. The debate goes on, and the 📜 Transcript button on its opening card has"
            " the full text."
        ]
        posted = [r for r in world.lb.api.sent("POST", r"/channels/\d+/messages") if "refused" in str(r.body)]
        assert len(posted) == 1  # posted once, then edited in place
        events = await world.rt.store.events(ran.handle.debate_id)
        assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "max_rounds"


@pytest.mark.parametrize("how", ["deleted", "forbidden"])
async def test_a_thread_gone_mid_debate_stops_the_model_calls(tmp_path: Path, how: str) -> None:
    script: dict[str, Any] = {
        "proposition": [f"Point {i}: cars crowd the street." for i in range(4)],
        "opposition": [f"Counter {i}: people need to get to work." for i in range(4)],
        "observer": [{"vote": "keep", "reason": "Fine."}],
        "moderator": ["Both sides spoke."],
    }
    async with arena(tmp_path, script=script, model={"latency": 0.05}, limits={"max_rounds": 4}) as world:
        running = await world.start()
        api = world.lb.api
        await api.wait_until(lambda: any(m.get("webhook_id") for m in api.in_channel(running.thread.id)))
        (api.delete_channel if how == "deleted" else api.forbid_channel)(running.thread.id)
        result = await asyncio.wait_for(running.handle.wait(), 10)
        await running.sink.finish()
        events = await world.rt.store.events(running.handle.debate_id)
        completed = events[-1]
        assert isinstance(completed, DebateCompleted)
        expected = "the debate thread was deleted" if how == "deleted" else "Rostra can no longer see"
        assert expected in str(completed.reason) or expected in str(result)
        started = [e for e in events if isinstance(e, TurnStarted)]
        assert len(started) <= 3  # 8 turns were planned; at most the ones under way when it vanished
        requests_then = len(api.requests)
        await asyncio.sleep(0.3)
        assert len(api.requests) == requests_then  # nothing more is sent to a thread that is gone


def _is_vote_card(body: dict[str, Any]) -> bool:
    return any("🗳️" in (e.get("title") or "") for e in body.get("embeds") or [])


@pytest.mark.slow
async def test_the_window_opens_only_once_its_card_and_ballot_are_visible(tmp_path: Path) -> None:
    async with arena(tmp_path) as world:
        api = world.lb.api
        api.fail(
            "POST", r"/channels/\d+/messages", status=403, code=50013, message="Nope", when=_is_vote_card
        )
        ran = await world.run(humans="vote", human_window=5)
        events = await world.rt.store.events(ran.handle.debate_id)
        [opened] = [e for e in events if isinstance(e, HumanVoteOpened)]
        card_posts = [r for r in api.sent("POST", r"/channels/\d+/messages") if _is_vote_card(r.body)]
        assert [r.status for r in card_posts] == [403, 200]  # refused, then tried once more with priority
        ballot = [r for r in api.requests if r.method == "PUT" and "/reactions/" in r.path]
        assert ballot and all(r.status == 204 for r in ballot)
        wall = time.time() - time.monotonic()
        [closed] = [e for e in events if isinstance(e, VotingClosed)]
        visible = max(r.at for r in ballot) + wall
        assert closed.at.timestamp() >= visible + 5 - 0.05  # the clock started once the ballot showed
        assert opened.window == 5


async def test_a_card_that_cannot_be_shown_makes_the_vote_go_on_without_people(tmp_path: Path) -> None:
    async with arena(tmp_path) as world:
        api = world.lb.api
        api.fail(
            "POST",
            r"/channels/\d+/messages",
            status=403,
            code=50013,
            message="Nope",
            when=_is_vote_card,
            times=None,
        )
        ran = await world.run(humans="vote", human_window=5)
        events = await world.rt.store.events(ran.handle.debate_id)
        [opened] = [e for e in events if isinstance(e, HumanVoteOpened)]
        [closed] = [e for e in events if isinstance(e, VotingClosed)]
        assert sum(closed.human_tally.values()) == 0
        assert (closed.at - opened.at).total_seconds() < 5  # it did not wait out a window nobody saw
        [notice] = [e for e in events if isinstance(e, Notice) and e.code == "vote_card_not_shown"]
        shown = [m["content"] for m in api.in_channel(ran.thread.id)]
        assert any(notice.message in text for text in shown)
        assert isinstance(events[-1], DebateCompleted)
