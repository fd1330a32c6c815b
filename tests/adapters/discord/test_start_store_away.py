"""`/debate start` when Rostra's database goes away for 30 s just after the debate's thread was
opened (another process holding the SQLite file's lock, or Postgres's debates table): the start is
refused in words a person reads, the thread opened for it does not stay behind empty and
unexplained, nothing is stored, and once the database is back the same person starts the debate
(their cooldown given back: no debate of theirs started)."""

from __future__ import annotations

import asyncio
from typing import Any

import discord
import pytest

from core.manager import DebateManager
from core.outlasting import TRY_AGAIN
from core.session import DebateHandle
from tests.adapters.discord.conftest import World
from tests.adapters.discord.test_invite_is_enough import invited_channel
from tests.database_away import database_away

pytestmark = pytest.mark.slow

AWAY = 30.0
STORAGE = {"lease_seconds": 2.0, "heartbeat_seconds": 1.0, "busy_timeout": 0.1}


def away_once_a_thread_opens(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> tuple[asyncio.Event, asyncio.Future[None]]:
    """The database goes away right after discord.py has opened the next thread (Discord answered);
    the outage runs in the test, outside the bot (its end is the future returned)."""
    opened_thread = asyncio.Event()
    held = asyncio.Event()
    create = discord.TextChannel.create_thread

    async def create_thread(channel: discord.TextChannel, **kwargs: Any) -> discord.Thread:
        thread = await create(channel, **kwargs)
        if not opened_thread.is_set():
            opened_thread.set()
            await world.env.external_wait(held.wait(), reason="the database goes away")
        return thread

    async def outage() -> None:
        await opened_thread.wait()
        await database_away(world.rt.config.storage.url, AWAY, held)

    monkeypatch.setattr(discord.TextChannel, "create_thread", create_thread)
    return held, asyncio.ensure_future(outage())


async def refused_then_started(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    held, away = away_once_a_thread_opens(world, monkeypatch)

    result = await world.start()  # answered once the bot waits for the outage to begin
    await asyncio.wait_for(held.wait(), 10)
    await world.env.settle(timeout=20)  # the start, carried on with the database away

    assert result.response is None  # the public "thinking…" reply was withdrawn
    [told] = result.followups
    assert told.ephemeral and told.content == TRY_AGAIN  # not "database is locked"
    assert not away.done()  # all of it while the database was away

    await away
    assert await world.rt.store.list_debates(5) == []  # nothing was stored for the refused start
    await asyncio.sleep(STORAGE["lease_seconds"])  # the refused start's claim lapses by itself
    again = await world.start()
    assert again.response is not None and again.response.content.startswith("🎙️ Debate started")
    assert (await world.latest()).status in ("running", "completed")


@pytest.mark.rostra(storage=STORAGE, limits={"user_cooldown": 60})
async def test_the_unused_thread_is_deleted_with_the_invites_permissions(
    world: World, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    # Rostra has what its invite asks. simcord gap: it deletes a thread only with Manage Channels,
    # where Discord asks Manage Threads of a thread (Delete/Close Channel); the test grants that too.
    simcord_gap = discord.Permissions(manage_channels=True)
    world.channel = invited_channel(world, "invited", also=simcord_gap)
    await refused_then_started(world, monkeypatch)
    [thread] = world.channel.threads  # the debate's; the refused start's thread is gone
    assert any(m.embeds and m.embeds[0].title for m in thread.history())


@pytest.mark.rostra(storage=STORAGE, limits={"user_cooldown": 60})
async def test_without_manage_threads_the_unused_thread_says_why_it_is_empty(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.channel = world.guild.create_text_channel(
        "no-managing", overwrites={world.me: discord.PermissionOverwrite(manage_threads=False)}
    )
    await refused_then_started(world, monkeypatch)
    unused, debate = world.channel.threads
    [line] = [m.content for m in unused.history()]
    assert line == f"🚫 No debate was started. {TRY_AGAIN}"
    assert any(m.embeds and m.embeds[0].title for m in debate.history())


@pytest.mark.rostra(storage=STORAGE)
async def test_a_start_whose_debate_was_created_just_before_the_database_went_away_goes_on(
    world: World, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """The database goes away for 30 s the moment the debate is created (where the start used to
    write down its thread next, and took the failure for a refused start): the person is told it
    started, the thread stays, and the debate runs to its end once the database is back."""
    created = asyncio.Event()
    held = asyncio.Event()
    start = DebateManager.start

    async def started(manager: DebateManager, *args: Any, **kwargs: Any) -> DebateHandle:
        handle = await start(manager, *args, **kwargs)
        if not created.is_set():
            created.set()
            await world.env.external_wait(held.wait(), reason="the database goes away")
        return handle

    async def outage() -> None:
        await created.wait()
        await database_away(world.rt.config.storage.url, AWAY, held)

    monkeypatch.setattr(DebateManager, "start", started)
    away = asyncio.ensure_future(outage())
    result = await world.start()
    await asyncio.wait_for(held.wait(), 10)
    await world.env.settle(timeout=20)

    answers = [m.content for m in (result.response, *result.followups) if m is not None]
    assert any(a.startswith("🎙️ Debate started") for a in answers), answers
    assert not any(TRY_AGAIN in a or "No debate was started" in a for a in answers)
    assert not away.done()  # all of it while the database was away
    await away
    record = await world.latest()
    handle = world.rt.manager.get(record.id)
    assert handle is not None
    await asyncio.wait_for(handle.wait(), 30)
    await world.env.settle(timeout=20)
    [thread] = world.channel.threads  # the debate's, kept
    assert (await world.latest()).status == "completed"
    values = await world.rt.store.binding_values(record.id)
    assert values["discord.thread_id"] == str(thread.id)
    assert values["discord.webhook_channel"] == str(world.channel.id)  # its webhook seat, counted
    assert values["discord.webhook_seat"] == "0"  # by every worker from the start (seats_taken)
    assert any(m.embeds and "Debate over" in (m.embeds[0].title or "") for m in thread.history())
