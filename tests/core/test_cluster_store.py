"""One bot over many processes, the store's side, on both backends (several stores on one database,
as several processes would hold): admission claims, cooldowns, inbound keys, live workers, and votes
relayed while the owner's notifications are down."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from bot.config import Secrets
from bot.runtime import Runtime
from core.errors import TOO_MANY_DEBATES, AdmissionError, ClaimLapsed
from core.events import HumanVoteOpened, VoteCast, VotingClosed
from core.ports import AdmissionAsk, Binding, ChannelClaim, Claimed, Refused, Store
from core.settings import StorageSettings
from core.spec import DebateSpec
from core.storage import open_store
from tests.core.test_lease_fence import run_sql
from tests.core.test_store import record
from tests.helpers import RecordingSink, make_config

Opener = Callable[[], Awaitable[Store]]


@pytest.fixture
async def opener(url: str) -> AsyncIterator[Opener]:
    opened: list[Store] = []

    async def open_one() -> Store:
        store = await open_store(url, StorageSettings(url=url, busy_timeout=2.0))
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        await store.close()


def ask(channel: str, *, scope: str = "s1", person: str = "u1", cooldown: float = 60.0) -> AdmissionAsk:
    return AdmissionAsk(
        platform="slack",
        scope=scope,
        channel=channel,
        person=person,
        max_per_scope=2,
        max_total=3,
        cooldown=cooldown,
    )


async def test_a_channel_claimed_in_one_process_is_refused_in_another_until_given_back(
    opener: Opener,
) -> None:
    a, b = await opener(), await opener()
    claimed = await a.admit(ask("c1"))
    assert isinstance(claimed, Claimed) and claimed.previous_start is None
    assert await b.admit(ask("c1", person="u2")) == Refused("starting")
    cooling = await b.admit(ask("c2", person="u1"))
    assert isinstance(cooling, Refused) and cooling.why == "cooldown" and 55 <= cooling.wait <= 60
    await a.give_back(ask("c1"), claimed)
    assert isinstance(await b.admit(ask("c1", person="u1")), Claimed)  # channel and cooldown are free


async def test_a_started_claim_finds_its_debate_by_either_channel_and_counts_while_it_runs(
    opener: Opener,
) -> None:
    a, b = await opener(), await opener()
    first = ask("origin", cooldown=0)
    claimed = await a.admit(first)
    assert isinstance(claimed, Claimed)
    # started in a thread of its channel, as on Discord
    thread = Binding(platform="slack", scope="s1", channel="thread", started_by="u1")
    await a.create_debate(record("d1", binding=thread), claim=ChannelClaim("slack", "origin"))
    for channel in ("origin", "thread"):
        found = await b.find_running("slack", channel)
        assert found is not None and found.id == "d1"
    refused = await b.admit(ask("origin", person="u2"))
    assert isinstance(refused, Refused) and refused.why == "running" and refused.topic == "Tabs?"
    assert isinstance(await b.admit(ask("c2", person="u2", cooldown=0)), Claimed)  # s1: 1 running, 1 pending
    assert await b.admit(ask("c3", person="u3")) == Refused("scope", count=2)
    assert isinstance(await b.admit(ask("c3", scope="s2", person="u3")), Claimed)  # 3 in all now
    assert await a.admit(ask("c4", scope="s3", person="u4")) == Refused("total", count=3)
    await a.set_status("d1", "completed")
    assert await b.find_running("slack", "origin") is None
    assert isinstance(await b.admit(ask("origin", person="u4")), Claimed)


async def test_admission_counts_every_process_and_refuses_with_the_same_words(
    tmp_path: Path, url: str
) -> None:
    """Two runtimes (as two processes) on one database: ten simultaneous starts, three pass."""
    limits = {"max_concurrent_debates": 3, "max_debates_per_scope": 10, "user_cooldown": 60}
    config = make_config(tmp_path, storage={"url": url}, limits=limits)
    async with Runtime(config, secrets=Secrets()) as a, Runtime(config, secrets=Secrets()) as b:

        async def one(i: int) -> str:
            try:
                await (a, b)[i % 2].admission.admit(
                    platform="slack", scope=f"s{i}", channel=f"c{i}", user=f"u{i}"
                )
            except AdmissionError as exc:
                return str(exc)
            return "claimed"

        outcomes = await asyncio.gather(*(one(i) for i in range(10)))
        assert outcomes.count("claimed") == 3
        assert set(outcomes) == {"claimed", TOO_MANY_DEBATES}


THREAD = {"thread_ts": "1700000000.000100", "ts:opening": "1700000000.000100"}


async def test_a_debate_is_created_only_while_its_claim_stands(url: str, opener: Opener) -> None:
    """A start admitted in a worker that was then paused past a lease, at any point before its debate
    is created: another start takes the channel, and the first, woken, creates nothing (its claim is
    gone), so the channel never runs two debates. A lapsed claim nobody took still stands."""
    a, b = await opener(), await opener()
    here = Binding(platform="slack", scope="s1", channel="c1")
    assert isinstance(await a.admit(ask("c1")), Claimed)
    await run_sql(url, "UPDATE claims SET expires_at = 0")  # as if its worker had stopped renewing it
    assert isinstance(await b.admit(ask("c1", person="u2")), Claimed)
    with pytest.raises(ClaimLapsed, match="its place in this channel lapsed"):
        await a.create_debate(record("d1", binding=here), claim=ChannelClaim("slack", "c1"), values=THREAD)
    assert await a.get_debate("d1") is None and await b.find_running("slack", "c1") is None
    assert await a.binding_values("d1") == {}  # nothing of it, where it would have lived included
    await b.create_debate(record("d2", binding=here), claim=ChannelClaim("slack", "c1"), values=THREAD)
    found = await a.find_running("slack", "c1")
    assert found is not None and found.id == "d2"
    assert await a.binding_values("d2") == THREAD  # stored with it: any worker finds its thread

    assert isinstance(await a.admit(ask("c3", person="u3")), Claimed)
    await run_sql(url, "UPDATE claims SET expires_at = 0 WHERE channel = 'c3'")  # lapsed, not taken
    await a.create_debate(record("d3", binding=here), claim=ChannelClaim("slack", "c3"))
    refused = Refused("running", topic="Tabs?", channel="c1")  # with where that debate runs
    assert await b.admit(ask("c3", person="u4")) == refused


async def test_a_start_that_never_became_a_debate_gives_the_cooldown_back_whichever_worker_is_asked(
    url: str, opener: Opener
) -> None:
    """A start admitted in one worker that could not give its claim back (the store away as it was
    refused, or the worker gone): once the claim lapses, the person's next start through another
    worker is not refused for a cooldown, since no debate of theirs started."""
    a, b = await opener(), await opener()
    assert isinstance(await a.admit(ask("c1")), Claimed)
    cooling = await b.admit(ask("c2"))
    assert isinstance(cooling, Refused) and cooling.why == "cooldown"  # while that start may go on
    await run_sql(url, "UPDATE claims SET expires_at = 0")  # its worker no longer renews it
    assert isinstance(await b.admit(ask("c2")), Claimed)
    again = await a.admit(ask("c3"))
    assert isinstance(again, Refused) and again.why == "cooldown"  # the start in c2 is this person's


async def test_a_person_with_a_debate_running_keeps_the_cooldown_when_another_claim_lapses(
    url: str, opener: Opener
) -> None:
    a, b = await opener(), await opener()
    claimed = await a.admit(ask("c1"))
    assert isinstance(claimed, Claimed)
    here = Binding(platform="slack", scope="s1", channel="c1")
    await a.create_debate(record("d1", binding=here), claim=ChannelClaim("slack", "c1"))
    assert isinstance(await a.admit(ask("c2", cooldown=0)), Claimed)  # a second start, never begun
    await run_sql(url, "UPDATE claims SET expires_at = 0 WHERE channel = 'c2'")
    cooling = await b.admit(ask("c3"))
    assert isinstance(cooling, Refused) and cooling.why == "cooldown"


async def test_an_inbound_key_is_first_once_across_processes_until_it_expires_or_is_forgotten(
    url: str, opener: Opener
) -> None:
    a, b = await opener(), await opener()
    answers = await asyncio.gather(*(s.first_delivery("slack:event:Ev1", 600) for s in (a, b, a, b)))
    assert sorted(answers) == [False, False, False, True]
    assert await a.first_delivery("slack:event:Ev2", 600) is True
    await run_sql(url, "UPDATE deliveries SET expires_at = 0 WHERE key = 'slack:event:Ev1'")
    assert await b.first_delivery("slack:event:Ev1", 600) is True  # expired: a new delivery
    assert await a.first_delivery("slack:event:Ev1", 600) is False
    await b.forget_delivery("slack:event:Ev1")  # what it began did not happen: the next is a first
    assert await a.first_delivery("slack:event:Ev1", 600) is True
    assert await b.first_delivery("slack:event:Ev1", 600) is False


async def test_live_workers_are_counted_per_role_and_leave_when_closed(opener: Opener) -> None:
    a, b, c = await opener(), await opener(), await opener()
    assert await a.live_workers("slack") == 0
    await a.join_workers("slack")
    await b.join_workers("slack")
    await c.join_workers("discord")
    assert (await c.live_workers("slack"), await c.live_workers("discord")) == (2, 1)
    await b.close()
    assert await a.live_workers("slack") == 1


@pytest.mark.slow
async def test_votes_relayed_while_the_owners_listener_is_down_with_3_s_left_are_all_counted(
    tmp_path: Path, postgres_url: str
) -> None:
    """The owner's LISTEN connection is killed by the server; three people vote through another
    process with 3 s of the window left. Each was told the vote counted (it is stored): all count."""
    import asyncpg

    config = make_config(
        tmp_path, storage={"url": postgres_url, "poll_seconds": 2.0}, model={"latency": 0.01}
    )
    spec = DebateSpec(
        "arena", "Tabs?", {"rounds": 2, "exchanges_per_round": 1, "humans": "vote", "human_window": 5}
    )
    sink = RecordingSink()
    opened: asyncio.Queue[HumanVoteOpened] = asyncio.Queue()
    sink.hooks.append(lambda e: opened.put_nowait(e) if isinstance(e, HumanVoteOpened) else None)
    admin = await asyncpg.connect(postgres_url)
    try:
        async with (
            Runtime(config, secrets=Secrets()) as owner,
            Runtime(config, secrets=Secrets()) as elsewhere,
        ):
            owner.enable_failover()
            handle = await owner.start_debate(spec, sink, seed=2)
            window = await asyncio.wait_for(opened.get(), timeout=30)
            killed = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND query ILIKE 'LISTEN%'"
            )
            assert killed >= 1  # the owner's listener is gone
            await asyncio.sleep(2.0)  # 3 s of the window left
            for person in ("u1", "u2", "u3"):
                await elsewhere.manager.cast_vote(handle.debate_id, window.vote_id, person, "replace")
            await handle.wait()
    finally:
        await admin.close()
    cast = [e for e in sink.events if isinstance(e, VoteCast) and e.voter.human]
    assert sorted(e.voter.id for e in cast) == ["u1", "u2", "u3"]
    first = sink.of(VotingClosed)[0]
    assert first.human_tally == {"keep": 0, "replace": 3}


async def test_a_live_workers_claim_is_renewed_and_expired_keys_are_purged(url: str) -> None:
    """The heartbeat keeps a pending claim of a live process past its first expiry, and removes the
    inbound keys whose time is up (a bounded number per beat)."""
    settings = StorageSettings(url=url, lease_seconds=1.0, heartbeat_seconds=0.2, busy_timeout=2.0)
    a, b = await open_store(url, settings), await open_store(url, settings)
    try:
        assert isinstance(await a.admit(ask("c1")), Claimed)
        for n in range(3):
            assert await a.first_delivery(f"k{n}", 0.1)
        await asyncio.sleep(2.5)  # two leases: renewed on every beat meanwhile
        assert await b.admit(ask("c1", person="u2")) == Refused("starting")
        assert await run_sql(url, "SELECT COUNT(*) FROM deliveries") == [(0,)]
    finally:
        await a.close()
        await b.close()


async def test_a_workers_share_of_a_budget_follows_the_live_workers(opener: Opener) -> None:
    """Two Slack workers spend half of a published budget each; once one leaves, the other all of it."""
    from core.workers import BudgetShare

    a, b = await opener(), await opener()
    share_a, share_b = BudgetShare(a, "slack", 1.0), BudgetShare(b, "slack", 1.0)
    await share_a.refresh()
    await share_b.refresh()
    await share_a.refresh()
    assert (share_a.of(50), share_b.of(50)) == (25.0, 25.0)
    await b.close()
    await share_a.refresh()
    assert share_a.of(50) == 50.0
