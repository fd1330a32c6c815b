"""A mention that starts a debate when Rostra's database goes away for 30 s just after the opening
card was posted (another process holding the SQLite file's lock, or Postgres's debates table): the
card says the debate did not start and the person is told, in words a person reads; nothing fails
with a traceback (the refused start's claim lapses by itself); once the database is back the same
person starts the debate (their cooldown given back: no debate of theirs started)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from core.manager import DebateManager
from core.outlasting import TRY_AGAIN
from core.session import DebateHandle
from testkit.slack_api import FakeSlack
from testkit.slack_world import CHANNEL
from tests.adapters.slack.conftest import ALICE, open_harness
from tests.database_away import database_away

pytestmark = pytest.mark.slow

AWAY = 30.0
STORAGE = {"lease_seconds": 2.0, "heartbeat_seconds": 1.0, "busy_timeout": 0.1}


async def test_a_start_meeting_the_database_away_is_withdrawn_and_can_be_asked_again(
    tmp_path: Path, api: FakeSlack, caplog: pytest.LogCaptureFixture, url: str
) -> None:
    card = api.hold_next("chat.postMessage", when=lambda args: "thread_ts" not in args)
    storage = {**STORAGE, "url": url}
    async with open_harness(tmp_path, api, storage=storage, limits={"user_cooldown": 60}) as slack:
        await slack.mention("debate Should cities ban cars?")
        await api.wait_until(lambda: card.held)
        held = asyncio.Event()
        away = asyncio.ensure_future(database_away(slack.rt.config.storage.url, AWAY, held))
        await asyncio.wait_for(held.wait(), 10)
        card.gate.set()  # the opening card is posted; the debate's start then meets the database away

        told = await slack.told(ALICE)
        assert told == f"🚫 The debate could not start: {TRY_AGAIN}"
        [opening] = api.top_level(CHANNEL)
        await api.wait_until(lambda: api.messages[(CHANNEL, opening["ts"])]["text"] == told)
        assert api.messages[(CHANNEL, opening["ts"])].get("blocks") in (None, [])  # no buttons left
        assert not away.done()  # all of it while the database was away
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []

        await away
        assert await slack.rt.store.list_debates() == []  # nothing was stored for the refused start
        await asyncio.sleep(STORAGE["lease_seconds"])  # the refused start's claim lapses by itself
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await handle.stop("test over")
        await slack.settle()
        assert len(api.top_level(CHANNEL)) == 2


async def test_a_debate_created_just_before_the_database_went_away_keeps_its_thread(
    tmp_path: Path, api: FakeSlack, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """The database goes away for 30 s the moment the debate is created (where the start used to
    write down its thread next, and lost it): the debate runs to its end once the database is back,
    and where it lives is stored with it, for the card's buttons, a restart or another worker."""
    created, held = asyncio.Event(), asyncio.Event()
    start = DebateManager.start

    async def started(manager: DebateManager, *args: Any, **kwargs: Any) -> DebateHandle:
        handle = await start(manager, *args, **kwargs)
        if not created.is_set():
            created.set()
            await held.wait()  # the database goes away
        return handle

    monkeypatch.setattr(DebateManager, "start", started)
    storage = {**STORAGE, "url": url}
    async with open_harness(tmp_path, api, storage=storage) as slack:
        await slack.mention("debate Should cities ban cars?")
        await asyncio.wait_for(created.wait(), 10)
        away = asyncio.ensure_future(database_away(slack.rt.config.storage.url, AWAY, held))
        await asyncio.wait_for(held.wait(), 10)
        await away
        assert not [t for t in slack.ephemerals_to(ALICE) if "could not start" in t]
        debate_id = await slack.only_debate_id()
        handle = slack.rt.manager.get(debate_id)
        assert handle is not None
        await asyncio.wait_for(handle.wait(), 30)
        await slack.settle()
        [opening] = api.top_level(CHANNEL)
        values = await slack.rt.store.binding_values(debate_id)
        assert values["thread_ts"] == values["ts:opening"] == opening["ts"]
        assert slack.thread()[-1]["text"].startswith("The end")
