"""The lease fence without holes, on both backends: a write is accepted only from the holder of the
debate's current fencing token. Real processes frozen with SIGSTOP: one paused past its lease while
another took the debate and let it go again, and one frozen inside a transaction on Postgres."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from core.errors import LeaseLost, StoreError
from core.events import Notice
from core.ports import Store
from core.settings import StorageSettings
from core.storage import open_store, sql
from tests.core.test_store import record
from tests.core.test_store_faults import hold_lock
from tests.helpers import CONFIG_PATH, REPO

LEASE = 2.0
HEARTBEAT = 0.5


@pytest.fixture
async def opener(url: str) -> AsyncIterator[Callable[[], Awaitable[Store]]]:
    opened: list[Store] = []

    async def open_one() -> Store:
        # leases renewed only when a test says so (the heartbeat would not fire within a test)
        settings = StorageSettings(url=url, lease_seconds=1200, heartbeat_seconds=600, busy_timeout=1.0)
        store = await open_store(url, settings)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        await store.close()


def note(debate_id: str, seq: int) -> Notice:
    return Notice(debate_id=debate_id, seq=seq, level="info", code="x", message=f"#{seq}")


def worker(url: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(
        ROSTRA_CONFIG=str(CONFIG_PATH),
        ROSTRA_STORAGE__URL=url,
        ROSTRA_STORAGE__LEASE_SECONDS=str(LEASE),
        ROSTRA_STORAGE__HEARTBEAT_SECONDS=str(HEARTBEAT),
        ROSTRA_MODEL__DEFAULT="scripted",
        ROSTRA_MODEL__LATENCY="0.05",
    )
    return subprocess.Popen(
        [sys.executable, "-m", "tests.workers.paused_owner", *args],
        cwd=REPO,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


async def stopped(proc: subprocess.Popen[str]) -> str:
    """The debate id the worker names as it stops itself, once the kernel shows it stopped."""
    assert proc.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), timeout=120)
    assert line.startswith("stopped "), line
    deadline = time.monotonic() + 60
    while state_of(proc.pid) != "T":
        assert time.monotonic() < deadline, "the worker never stopped"
        await asyncio.sleep(0.05)
    return line.split()[1]


def state_of(pid: int) -> str:
    """The process's state as the kernel shows it (T: stopped)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]


async def take(store: Store, debate_id: str, *, within: float = 60.0) -> float:
    """Try to take the debate every heartbeat, as a standby does; the seconds it took."""
    started = time.monotonic()
    while True:
        try:
            if await store.acquire(debate_id):
                return time.monotonic() - started
        except StoreError:  # a lock still held: the next heartbeat tries again
            pass
        assert time.monotonic() - started < within, "the debate was never taken over"
        await asyncio.sleep(HEARTBEAT)


def ended(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


async def test_an_owner_paused_past_its_lease_writes_nothing_once_another_took_the_debate(
    url: str, opener: Callable[[], Awaitable[Store]]
) -> None:
    """The reported hole: the old owner froze, a new owner took the debate, wrote nothing and let it
    go (owner ''); the old owner woke and went on writing events and model calls. Now every write of
    the old owner is refused and its debate stops as taken over."""
    proc = worker(url, "debate", "6")
    try:
        debate_id = await stopped(proc)
        store = await opener()
        events, calls = await store.events(debate_id), await store.calls(debate_id)
        assert events[-1].seq == 6
        await take(store, debate_id)  # once the frozen owner's lease has run out
        await store.release(debate_id)  # the new owner wrote nothing and let it go
        released = await store.get_debate(debate_id)
        assert released is not None and released.owner == ""
        proc.send_signal(signal.SIGCONT)
        result = ended(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert result == {"reason": "interrupted", "detail": "another Rostra process took this debate over"}
    assert await store.events(debate_id) == events  # not one row more
    assert await store.calls(debate_id) == calls
    after = await store.get_debate(debate_id)
    assert after is not None and (after.status, after.owner) == ("running", "")  # resumable, unowned


async def test_an_owner_frozen_inside_a_transaction_is_taken_over_within_the_lease(
    postgres_url: str, tmp_path: Path
) -> None:
    """Postgres: the owner froze while its transaction held the debate's row lock. The server ends
    that transaction (idle_in_transaction_session_timeout) within half a lease, so a standby trying
    every heartbeat takes the debate once the lease runs out; the frozen owner, woken, writes nothing."""
    proc = worker(postgres_url, "transaction")
    settings = StorageSettings(
        url=postgres_url, lease_seconds=LEASE, heartbeat_seconds=HEARTBEAT, busy_timeout=1.0
    )
    store = await open_store(postgres_url, settings)
    try:
        debate_id = await stopped(proc)
        frozen = await store.get_debate(debate_id)
        assert frozen is not None and frozen.owner not in ("", store.owner)
        waited = await take(store, debate_id)
        taken_at = time.time()
        await store.append(note(debate_id, 2))
        proc.send_signal(signal.SIGCONT)
        result = ended(proc)
        stored = [(e.seq, e.message) for e in await store.events(debate_id) if isinstance(e, Notice)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        await store.close()
    # the lease ran out at most LEASE after the freeze; the standby looks every HEARTBEAT
    print(f"taken over {waited:.1f} s after the freeze (lease {LEASE} s, heartbeat {HEARTBEAT} s)")
    assert taken_at <= frozen.lease_until + HEARTBEAT + 5.0, f"taken over after {waited:.1f} s"
    assert result == {"outcomes": ["StoreUnavailable", "LeaseLost", "LeaseLost"]}
    assert stored == [(1, "one"), (2, "#2")]


async def test_a_renewal_notices_a_debate_another_store_took_and_let_go(
    opener: Callable[[], Awaitable[Store]], caplog: pytest.LogCaptureFixture
) -> None:
    """Two stores as two processes, the lease run out by hand: the second takes the debate and lets
    it go. The first's heartbeat says so once, stops renewing it, and every write it tries is refused,
    although the debate has no owner now."""
    first, second = await opener(), await opener()
    await first.create_debate(record("d"))
    await first.append(note("d", 1))
    await expire(url_of(first), "d")
    assert await second.acquire("d")
    await second.release("d")
    caplog.set_level("WARNING", logger="core.storage")
    renew: Any = first
    await renew._write(renew._renew)
    await renew._write(renew._renew)
    taken = [r.getMessage() for r in caplog.records if "taken by another process" in r.getMessage()]
    assert taken == ["debate d: its lease was taken by another process"]
    with pytest.raises(LeaseLost):
        await first.append(note("d", 2))
    with pytest.raises(LeaseLost):
        await first.record_call("d", "ada|proposition|turn", 0, '"late"')
    with pytest.raises(LeaseLost):
        await first.set_status("d", "interrupted", "the bot shut down mid-debate")
    with pytest.raises(LeaseLost):
        await first.set_binding_value("d", "discord.delivered", "9")
    assert [e.seq for e in await second.events("d")] == [1]
    assert await second.calls("d") == {}
    now = await second.get_debate("d")
    assert now is not None and (now.status, now.owner) == ("running", "")


async def test_a_debate_a_store_ended_itself_stays_writable_by_it_until_another_takes_it(
    opener: Callable[[], Awaitable[Store]],
) -> None:
    """Ending a debate gives its lease up; the front end still records where it showed the end. Once
    another process takes the debate, the first store's writes are refused, even after it let go. A
    store that never held an unowned debate may keep a front end's detail for it, nothing else."""
    first, second = await opener(), await opener()
    await first.create_debate(record("d"))
    await first.set_status("d", "completed", "time ran out")
    await first.set_binding_value("d", "result_message", "42")
    assert await second.binding_values("d") == {"result_message": "42"}
    await second.set_binding_value("d", "thread", "7")  # a thread reattached before a resume
    with pytest.raises(LeaseLost):
        await second.append(note("d", 1))  # but no debate state without the lease
    assert await second.acquire("d")
    await second.release("d")
    with pytest.raises(LeaseLost):
        await first.set_binding_value("d", "result_message", "44")  # a former holder: taken since
    assert await second.binding_values("d") == {"result_message": "42", "thread": "7"}


async def test_a_store_whose_lease_went_stale_asks_before_anything_more_is_shown(url: str) -> None:
    """What a platform shows is not fenced by the store, so a front end asks `still_held` first. A
    store whose heartbeat stopped past its lease (as a paused process's does) renews before it
    answers: no once another store took the debate, yes when nobody did (and the lease is its own
    again). A store that never held a debate answers yes; one that ended it itself, too."""
    settings = StorageSettings(url=url, lease_seconds=LEASE, heartbeat_seconds=HEARTBEAT, busy_timeout=1.0)
    paused, other, stranger = [await open_store(url, settings) for _ in range(3)]
    try:
        await paused.create_debate(record("taken"))
        await paused.create_debate(record("left"))
        assert await paused.still_held("taken")
        frozen: Any = paused
        frozen._heartbeat_task.cancel()  # its leases are renewed no more, as in a paused process
        await asyncio.sleep(LEASE + HEARTBEAT)
        assert await other.acquire("taken")
        assert not await paused.still_held("taken")  # taken meanwhile: nothing more from here
        assert await other.still_held("taken")
        assert await stranger.still_held("taken")  # never held it: not for the lease to say
        assert await paused.still_held("left")  # nobody took it: renewed, and its own again
        left = await other.get_debate("left")
        assert left is not None and left.owner == paused.owner and left.lease_until > time.time()
        assert not await other.acquire("left")
        await other.set_status("taken", "completed", "time ran out")  # ended by its holder
        assert await other.still_held("taken")  # its closing card is still its to show
    finally:
        for store in (paused, other, stranger):
            await store.close()


async def test_a_stale_lease_the_store_cannot_confirm_is_waited_for_not_given_up(tmp_path: Path) -> None:
    """The database away (another process holds SQLite's lock) while a lease goes stale: `still_held`
    cannot say who holds the debate, so it waits; once the database answers it renews, and says yes."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    settings = StorageSettings(url=url, lease_seconds=LEASE, heartbeat_seconds=HEARTBEAT, busy_timeout=0.1)
    store = await open_store(url, settings)
    try:
        await store.create_debate(record("d"))
        frozen: Any = store
        frozen._heartbeat_task.cancel()
        held = threading.Event()
        outage = asyncio.ensure_future(asyncio.to_thread(hold_lock, tmp_path / "r.db", 2 * LEASE, held))
        await asyncio.to_thread(held.wait, 10)
        await asyncio.sleep(LEASE)  # stale now, by the store's own clock
        asked = asyncio.ensure_future(store.still_held("d"))
        await asyncio.sleep(LEASE / 2)
        assert not asked.done()  # neither yes nor no while the database cannot say
        await outage
        assert await asyncio.wait_for(asked, 10 * HEARTBEAT)
        after = await store.get_debate("d")
        assert after is not None and after.owner == store.owner and after.lease_until > time.time()
    finally:
        await store.close()


async def test_a_write_refused_undoes_no_other_write_of_its_batch(
    opener: Callable[[], Awaitable[Store]],
) -> None:
    """Group commit: writes queued together share a transaction (on Postgres the appends go in one
    statement). One the database refuses (a debate id already taken), one out of sequence and one
    to a debate another process took each fail alone; every other write of the batch is stored."""
    store, other = await opener(), await opener()
    ids = [f"d{i}" for i in range(6)]
    for debate_id in [*ids, "gap", "taken"]:
        await store.create_debate(record(debate_id))
    await expire(url_of(store), "taken")
    assert await other.acquire("taken")
    outcomes = await asyncio.gather(
        *(store.append(note(d, 1)) for d in ids[:3]),
        store.create_debate(record("d0")),
        store.append(note("gap", 2)),
        store.append(note("taken", 1)),
        *(store.append(note(d, 1)) for d in ids[3:]),
        return_exceptions=True,
    )
    refused = ["StoreError", "StoreError", "LeaseLost"]
    assert [type(o).__name__ for o in outcomes] == ["NoneType"] * 3 + refused + ["NoneType"] * 3
    assert "does not follow 0" in str(outcomes[4])
    for debate_id in ids:
        assert [e.seq for e in await store.events(debate_id)] == [1]
    assert await store.events("gap") == await store.events("taken") == []


def url_of(store: Store) -> str:
    settings: StorageSettings = getattr(store, "settings")  # noqa: B009
    return settings.url


async def expire(url: str, debate_id: str) -> None:
    """Run the debate's lease out by hand (as if its owner had stopped renewing long ago)."""
    await run_sql(url, f"UPDATE debates SET lease_until = 0 WHERE id = '{debate_id}'")


async def test_a_version_2_database_gains_the_fencing_token_and_its_debates_go_on(url: str) -> None:
    """A database the previous Rostra wrote (schema 2, no token) is upgraded in place on opening."""
    settings = StorageSettings(url=url)
    store = await open_store(url, settings)
    await store.create_debate(record("d"))
    await store.append(note("d", 1))
    await store.close()
    await run_sql(url, "ALTER TABLE debates DROP COLUMN lease_token", "UPDATE schema_version SET version = 2")

    store = await open_store(url, settings)
    try:
        assert await store.acquire("d")
        await store.append(note("d", 2))
        assert [e.seq for e in await store.events("d")] == [1, 2]
    finally:
        await store.close()
    assert await run_sql(url, "SELECT version FROM schema_version") == [(sql.SCHEMA_VERSION,)]


async def run_sql(url: str, *statements: str) -> list[tuple[Any, ...]]:
    """Statements run as another program would; the last one's rows."""
    rows: list[tuple[Any, ...]] = []
    if url.startswith("sqlite:///"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        with conn:
            for statement in statements:
                rows = [tuple(r) for r in conn.execute(statement).fetchall()]
        conn.close()
        return rows
    import asyncpg

    pg = await asyncpg.connect(url)
    try:
        for statement in statements:
            rows = [tuple(r) for r in await pg.fetch(statement)]
    finally:
        await pg.close()
    return rows
