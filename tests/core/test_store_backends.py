"""The store protocol on both backends: SQLite on a real file, Postgres on a real server.

The same tests run against each; what one backend does that the other cannot (WAL mode, version-1
files, NOTIFY) is tested in the backend's own tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import asyncpg
import pytest

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.errors import LeaseLost, StoreError
from core.events import HumanVoteOpened, Notice, PhaseChanged, TurnCompleted, VoteCast, VotingClosed
from core.ports import Binding, Store, retire_owner_id
from core.settings import StorageSettings
from core.spec import DebateSpec
from core.storage import open_store
from core.storage.postgres import PostgresStore
from core.storage.sqlite import SQLiteStore
from tests.core.test_store import record
from tests.helpers import RecordingSink, make_config

Opener = Callable[[], Awaitable[Store]]


class Leased(Protocol):
    """What the lease tests reach into: each backend's owner id, its queued writes and the
    heartbeat's renewal (the same names on both backends)."""

    _owner: str

    async def _write(self, op: Any) -> Any: ...

    def _renew(self, conn: Any) -> Any: ...


def leased(store: Store) -> Leased:
    assert isinstance(store, SQLiteStore | PostgresStore)
    return store


ARENA = {"rounds": 2, "exchanges_per_round": 2, "first_speaker": "ada", "humans": "off"}


@pytest.fixture(params=["sqlite", "postgres"])
async def opener(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    """Opens stores (as many processes would) on one fresh database of the backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'r.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    opened: list[Store] = []

    async def open_one() -> Store:
        store = await open_store(url, StorageSettings(url=url, busy_timeout=1.0))
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        await store.close()


def note(debate_id: str, seq: int, message: str = "") -> Notice:
    return Notice(debate_id=debate_id, seq=seq, level="info", code="x", message=message or f"#{seq}")


async def test_events_round_trip_and_seq_must_not_skip(opener: Opener) -> None:
    store = await opener()
    await store.create_debate(record("d1"))
    await store.append(PhaseChanged(debate_id="d1", seq=1, phase="debating"))
    await store.append(note("d1", 2, "hello"))
    with pytest.raises(StoreError, match="does not follow 2"):
        await store.append(note("d1", 4))
    with pytest.raises(StoreError):
        await store.append(note("d1", 2, "again"))
    events = await store.events("d1")
    assert [(e.seq, e.kind) for e in events] == [(1, "phase_changed"), (2, "notice")]
    assert isinstance(events[1], Notice) and events[1].message == "hello"


async def test_debates_statuses_bindings_and_listing(opener: Opener) -> None:
    store = await opener()
    await store.create_debate(record("a"))
    await store.create_debate(record("b"))
    await store.set_status("a", "completed", "time ran out")
    await store.set_binding_value("b", "thread", "123")
    await store.set_binding_value("b", "thread", "456")
    other = await opener()  # another process sees what was committed
    a = await other.get_debate("a")
    assert a is not None and (a.status, a.reason, a.owner) == ("completed", "time ran out", "")
    assert a.binding == Binding(platform="discord", scope="g1", channel="c1", started_by="u1")
    assert [r.id for r in await other.debates_with_status("running")] == ["b"]
    assert await other.binding_values("b") == {"thread": "456"}
    assert {r.id for r in await other.list_debates()} == {"a", "b"}
    assert await other.get_debate("nope") is None


async def test_running_values_count_every_workers_running_debates_of_one_channel(opener: Opener) -> None:
    first, second = await opener(), await opener()  # two workers on one database
    for debate_id, store, channel, seat in [
        ("a", first, "c1", "0"),
        ("b", first, "c1", "0"),
        ("c", second, "c1", "1"),
        ("d", second, "c2", "0"),  # another channel
        ("e", first, "c1", "1"),  # ended: no longer counted
        ("f", first, "c1", None),  # no seat stored (yet)
    ]:
        await store.create_debate(record(debate_id))
        await store.set_binding_value(debate_id, "channel", channel)
        if seat is not None:
            await store.set_binding_value(debate_id, "seat", seat)
    await first.set_status("e", "completed")
    for store in (first, second):
        assert await store.running_values("seat", ("channel", "c1")) == {"0": 2, "1": 1}
    assert await first.running_values("seat", ("channel", "c9")) == {}


async def test_model_calls_are_fenced_and_never_overwritten(opener: Opener) -> None:
    owner, other = await opener(), await opener()
    await owner.create_debate(record("d"))
    await owner.record_call("d", "ada|proposition|turn", 0, '"first"')
    await owner.record_call("d", "ada|proposition|turn", 0, '"second"')
    with pytest.raises(LeaseLost):
        await other.record_call("d", "ada|proposition|turn", 0, '"other"')
    with pytest.raises(LeaseLost):
        await other.append(note("d", 1))
    assert not await other.acquire("d")
    assert await owner.calls("d") == {("ada|proposition|turn", 0): '"first"'}
    await owner.release("d")
    assert await other.acquire("d")
    with pytest.raises(LeaseLost):
        await owner.append(note("d", 1))  # the first owner lost it: fenced out
    await other.append(note("d", 1))
    assert [e.seq for e in await owner.events("d")] == [1]


async def test_many_debates_append_at_once_without_gaps(opener: Opener) -> None:
    stores = [await opener() for _ in range(3)]
    ids = [f"d{i}" for i in range(12)]
    for i, debate_id in enumerate(ids):
        await stores[i % 3].create_debate(record(debate_id))

    async def debate(i: int, debate_id: str) -> None:
        for seq in range(1, 26):
            await stores[i % 3].append(note(debate_id, seq))

    await asyncio.gather(*(debate(i, d) for i, d in enumerate(ids)))
    for debate_id in ids:
        assert [e.seq for e in await stores[0].events(debate_id)] == list(range(1, 26))


async def test_a_vote_left_by_another_process_reaches_the_owner(opener: Opener) -> None:
    owner, other = await opener(), await opener()
    await owner.create_debate(record("d"))
    waiting = asyncio.ensure_future(owner.wait_for_votes())
    await asyncio.sleep(0.2)  # the owner is listening (Postgres) or polling (SQLite)
    await other.post_vote("d", '{"vote_id": "v1", "voter": "u1", "choice": "keep"}')
    await asyncio.wait_for(waiting, timeout=10)
    await other.post_vote("d", '{"control": "stop"}')
    left = ['{"vote_id": "v1", "voter": "u1", "choice": "keep"}', '{"control": "stop"}']
    assert await other.waiting_votes("d") == left  # any process may look: nothing is taken
    assert await owner.waiting_votes("d") == left
    assert await owner.take_votes("d") == left
    assert await owner.take_votes("d") == []
    with pytest.raises(LeaseLost):
        await other.take_votes("d")


async def test_a_debate_cut_short_on_postgres_resumes_to_the_same_end(
    tmp_path: Path, postgres_url: str
) -> None:
    """The whole engine on Postgres (ROSTRA_STORAGE__URL=postgresql://…): cut mid-debate, resumed,
    it ends as the same debate on SQLite does."""
    from tests.core.test_resume import (
        OPTIONS,
        TOPIC,
        config_for,
        events_of,
        figures,
        resume,
        run_until,
        spoken,
    )

    spec = DebateSpec("arena", TOPIC, OPTIONS)
    on_sqlite = config_for(tmp_path / "sqlite")
    on_postgres = config_for(tmp_path, storage={"url": postgres_url})
    results = []
    for config in (on_sqlite, on_postgres):
        third_turn = lambda e: isinstance(e, TurnCompleted) and e.turn_id == "t3"  # noqa: E731
        debate_id = await run_until(config, spec, third_turn)
        [handle], [result] = await resume(config, RecordingSink())
        assert handle.debate_id == debate_id and result.reason == "max_rounds"
        events, rec = await events_of(config, debate_id)
        assert rec is not None and rec.status == "completed"
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        results.append(events)
    assert spoken(results[0]) == spoken(results[1])
    assert figures(results[0]) == figures(results[1])


@pytest.mark.slow
async def test_a_vote_cast_in_a_process_that_does_not_run_the_debate_counts(
    tmp_path: Path, request: pytest.FixtureRequest, opener: Opener
) -> None:
    """Two runtimes on one database (two processes): a person's vote reaches the one running the
    debate (through the store: NOTIFY on Postgres, polling on SQLite) and is counted."""
    url = (
        request.getfixturevalue("postgres_url")
        if "postgres" in request.node.callspec.id
        else f"sqlite:///{tmp_path / 'votes.db'}"
    )
    config = make_config(tmp_path, storage={"url": url, "poll_seconds": 0.2}, model={"latency": 0.01})
    spec = DebateSpec(
        "arena", "Tabs?", {"rounds": 2, "exchanges_per_round": 1, "humans": "vote", "human_window": 5}
    )
    sink = RecordingSink()
    opened: asyncio.Queue[HumanVoteOpened] = asyncio.Queue()
    sink.hooks.append(lambda e: opened.put_nowait(e) if isinstance(e, HumanVoteOpened) else None)
    async with Runtime(config, secrets=Secrets()) as owner, Runtime(config, secrets=Secrets()) as elsewhere:
        owner.enable_failover()
        handle = await owner.start_debate(spec, sink, seed=2)
        window = await asyncio.wait_for(opened.get(), timeout=30)
        assert elsewhere.manager.get(handle.debate_id) is None
        await elsewhere.manager.cast_vote(handle.debate_id, window.vote_id, "u7", "replace", voter_name="Ana")
        result = await handle.wait()
    [cast] = [e for e in sink.events if isinstance(e, VoteCast) and e.voter.human]
    assert (cast.voter.id, cast.choice) == ("u7", "replace")
    [closed] = sink.of(VotingClosed)
    assert closed.human_tally == {"keep": 0, "replace": 1}
    assert result.stats.human_votes == 1


async def test_postgres_faults_pause_a_debate_and_it_goes_on(tmp_path: Path, postgres_url: str) -> None:
    """On a real server: a table lock held past the lock timeout, then every connection of the
    store killed by the server. The debate pauses on each, goes on, and shows only what it kept."""
    import asyncpg

    from core.events import Event

    config = make_config(
        tmp_path,
        storage={"url": postgres_url, "busy_timeout": 0.1, "retry_initial": 0.05, "retry_max": 0.2},
        model={"latency": 0.5},
    )
    admin = await asyncpg.connect(postgres_url)
    faults: list[asyncio.Task[None]] = []

    async def lock_then_kill() -> None:
        async with admin.transaction():
            await admin.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
            await asyncio.sleep(1.0)
        await asyncio.sleep(0.2)
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )

    def at(event: Event) -> None:
        if event.seq == 8 and not faults:
            faults.append(asyncio.create_task(lock_then_kill()))

    sink = RecordingSink()
    sink.hooks.append(at)
    try:
        async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
            handle = await rt.start_debate(DebateSpec("arena", "Tabs?", ARENA), sink, seed=4)
            result = await handle.wait()
            await faults[0]
            stored = await rt.store.events(handle.debate_id)
    finally:
        await admin.close()
    assert result.reason == "max_rounds", result.detail
    assert stored == sink.events  # every event shown is stored, once, in order
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert any(isinstance(e, Notice) and e.code == "store_paused" for e in stored)


async def test_a_debate_that_ends_as_its_lease_is_renewed_is_not_reported_taken(
    opener: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    """Ending a debate gives its lease up in the status write; a heartbeat's renewal that runs right
    after that write (same batch on SQLite, another pooled connection on Postgres), before the
    store has forgotten the debate, found it unowned and warned that another process took it."""
    store = await opener()
    ids = [f"d{i}" for i in range(8)]
    for debate_id in ids:
        await store.create_debate(record(debate_id))
    caplog.set_level("WARNING", logger="core.storage")
    renew = leased(store)._write(
        leased(store)._renew
    )  # what the heartbeat does, queued right behind the ends
    await asyncio.gather(*(store.set_status(d, "completed") for d in ids), renew)
    assert [r.getMessage() for r in caplog.records if "taken by another process" in r.getMessage()] == []
    for debate_id in ids:
        ended = await store.get_debate(debate_id)
        assert ended is not None and ended.status == "completed" and ended.owner == ""


async def test_a_lease_another_process_took_is_reported_once_and_no_longer_renewed(
    opener: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = await opener(), await opener()
    await first.create_debate(record("d1"))
    retire_owner_id(leased(first)._owner)  # as if the first process had died: its lease is void at once
    assert await second.acquire("d1")
    caplog.set_level("WARNING", logger="core.storage")
    await leased(first)._write(leased(first)._renew)  # the first process's heartbeat, still running
    await leased(first)._write(leased(first)._renew)
    taken = [r.getMessage() for r in caplog.records if "taken by another process" in r.getMessage()]
    assert taken == ["debate d1: its lease was taken by another process"]
    now = await second.get_debate("d1")
    assert now is not None and now.owner == leased(second)._owner


async def test_a_process_opens_a_current_postgres_store_while_another_writes(postgres_url: str) -> None:
    """A worker starting beside running ones: the schema is current, so opening the store takes no
    table lock (the DDL's CREATE ... IF NOT EXISTS would wait on, and could deadlock with, a write
    under way). Here a write holds its lock on the debates table for longer than the lock timeout."""
    settings = StorageSettings(url=postgres_url, busy_timeout=1.0)
    first = await open_store(postgres_url, settings)  # the schema, created
    await first.close()
    writer = await asyncpg.connect(postgres_url)
    try:
        async with writer.transaction():
            await writer.execute("LOCK TABLE debates IN ROW EXCLUSIVE MODE")  # as an INSERT holds it
            store = await asyncio.wait_for(open_store(postgres_url, settings), 5)
            await store.close()
    finally:
        await writer.close()
