"""Recovery is the engine's own: a manager and a store are all it needs to pick a debate up again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import cast

import pytest

from core.clock import FakeClock
from core.errors import NowhereToRun, PlatformUnavailable
from core.events import DebateCompleted, Notice, TurnCompleted
from core.llm.registry import ModelRegistry
from core.manager import DebateManager
from core.ports import DebateRecord, EventSink
from core.recovery import RESUME_OFF, Recovery
from core.session import DebateHandle
from core.settings import CoreSettings
from core.spec import DebateSpec
from core.storage import open_store
from tests.helpers import RecordingSink, make_config

SPEC = DebateSpec(
    "arena", "Should cities ban cars?", {"rounds": 2, "exchanges_per_round": 1, "first_speaker": "ada"}
)


@asynccontextmanager
async def engine(url: str, settings: CoreSettings) -> AsyncIterator[DebateManager]:
    """The engine alone, as a process builds it: a store, the models and the manager."""
    store = await open_store(url, settings.storage)
    clock = FakeClock()
    manager = DebateManager(
        settings=settings, store=store, models=ModelRegistry(settings.model, clock=clock), clock=clock
    )
    try:
        yield manager
    finally:
        await manager.aclose()
        await store.close()


async def cut_short(url: str, settings: CoreSettings) -> str:
    """Start a debate and stop the process once its first turn is said (it stays resumable)."""
    said = asyncio.Event()
    sink = RecordingSink()
    sink.hooks.append(lambda e: said.set() if isinstance(e, TurnCompleted) else None)
    async with engine(url, settings) as manager:
        handle = await manager.start(SPEC, sink, seed=4)
        await said.wait()
        return handle.debate_id


async def test_a_cut_short_debate_is_resumed_and_finished_without_the_bot(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    settings, url = config.core(), config.storage.url
    debate_id = await cut_short(url, settings)
    sink = RecordingSink()

    async def attach(record: DebateRecord, bindings: dict[str, str]) -> EventSink | None:
        return sink

    async with engine(url, settings) as manager:
        recovery = Recovery(manager, resume=True, heartbeat_seconds=settings.storage.heartbeat_seconds)
        [handle] = await recovery.resume_debates("terminal", attach)
        result = await handle.wait()
        await recovery.aclose()
    assert handle.debate_id == debate_id and result.reason in ("completed", "max_rounds")
    assert isinstance(sink.events[-1], DebateCompleted)
    assert all(e.seq > 1 for e in sink.events)  # what the channel saw before the cut is not shown again


async def test_with_resuming_off_the_debate_is_closed_with_the_engine_s_message(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    settings, url = config.core(), config.storage.url
    debate_id = await cut_short(url, settings)
    sink = RecordingSink()

    async def attach(record: DebateRecord, bindings: dict[str, str]) -> EventSink | None:
        return sink

    async with engine(url, settings) as manager:
        recovery = Recovery(manager, resume=False, heartbeat_seconds=settings.storage.heartbeat_seconds)
        assert await recovery.resume_debates("terminal", attach) == []
        record = await manager.store.get_debate(debate_id)
    notices = [e for e in sink.events if isinstance(e, Notice)]
    assert [n.message for n in notices] == [RESUME_OFF]
    assert record is not None and record.status == "interrupted" and record.reason == RESUME_OFF


async def test_a_debate_asked_for_that_no_longer_fits_is_closed_saying_why(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    debate_id = await cut_short(config.storage.url, config.core())
    capped = make_config(tmp_path, limits={"max_rounds": 1}).core()  # the debate asked for 2 rounds
    sink = RecordingSink()
    async with engine(config.storage.url, capped) as manager:
        recovery = Recovery(manager, resume=True, heartbeat_seconds=capped.storage.heartbeat_seconds)
        record = await manager.store.get_debate(debate_id)
        assert record is not None
        assert await recovery.resume_asked(record, sink) is None
        record = await manager.store.get_debate(debate_id)
    [notice] = [e for e in sink.events if isinstance(e, Notice)]
    assert notice.message.startswith("This debate could not be resumed: its options no longer fit")
    assert record is not None and record.status == "failed"


class _Taking:
    """The manager as a failover's look sees it: what was taken for which debate, in order."""

    def __init__(self) -> None:
        self.took: list[str] = []

    async def take_stop(self, debate_id: str) -> None:
        self.took.append(f"stop {debate_id}")

    async def deliver_votes(self, debate_id: str) -> None:
        self.took.append(f"votes {debate_id}")


class _TakenOver:
    """A debate just taken over, replaying its log until `live` is set."""

    def __init__(self, debate_id: str, live: asyncio.Event) -> None:
        self.debate_id = debate_id
        self.live = live
        self.done = False

    @property
    def catching_up(self) -> bool:
        return not self.live.is_set()


async def test_a_debate_slow_to_catch_up_does_not_hold_back_what_was_left_for_another() -> None:
    """Many debates taken over at once: each gets the Stop and votes people left for it as soon as it
    is live, not after the debates before it in the look (each may take up to `CATCH_UP_WAIT`)."""
    manager = _Taking()
    recovery = Recovery(cast(DebateManager, manager), resume=True, heartbeat_seconds=1.0)
    slow_live, quick_live = asyncio.Event(), asyncio.Event()
    quick_live.set()
    taken = [_TakenOver("slow", slow_live), _TakenOver("quick", quick_live)]
    taking = asyncio.create_task(recovery._requests_left_for(cast(list[DebateHandle], taken)))
    for _ in range(100):
        if "votes quick" in manager.took:
            break
        await asyncio.sleep(0.01)
    assert manager.took == ["stop slow", "votes quick"]  # the slow one's Stop at once, its votes later
    slow_live.set()
    await asyncio.wait_for(taking, 1.0)
    assert manager.took == ["stop slow", "votes quick", "votes slow"]


async def test_a_platform_down_while_a_debate_is_picked_up_leaves_it_resumable_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The front end cannot reach its platform to find the debate's thread: one warning line (no
    traceback on every look while the platform is down), the debate left resumable, and picked up
    at the next look once the platform answers."""
    config = make_config(tmp_path)
    settings, url = config.core(), config.storage.url
    debate_id = await cut_short(url, settings)
    sink = RecordingSink()
    down = True

    async def attach(record: DebateRecord, bindings: dict[str, str]) -> EventSink | None:
        if down:
            raise PlatformUnavailable("Discord is not answering (502 Bad Gateway)")
        return sink

    async with engine(url, settings) as manager:
        recovery = Recovery(manager, resume=True, heartbeat_seconds=settings.storage.heartbeat_seconds)
        with caplog.at_level(logging.WARNING, logger="core.recovery"):
            assert await recovery.resume_debates("terminal", attach) == []
        said = [r for r in caplog.records if r.name == "core.recovery"]
        assert [r.getMessage() for r in said] == [
            f"debate {debate_id}: Discord is not answering (502 Bad Gateway); it stays resumable"
        ]
        assert said[0].exc_info is None
        record = await manager.store.get_debate(debate_id)
        assert record is not None and record.status in ("running", "interrupted")
        down = False
        [handle] = await recovery.resume_debates("terminal", attach)
        result = await handle.wait()
        await recovery.aclose()
    assert handle.debate_id == debate_id and result.reason in ("completed", "max_rounds")


async def test_a_debate_whose_place_is_gone_for_good_is_closed_as_stopped_with_the_reason(
    tmp_path: Path,
) -> None:
    """The front end says where the debate ran is gone for good (its workspace removed the app): the
    debate is closed as stopped, its reason stored, and it is not looked for again."""
    config = make_config(tmp_path)
    settings, url = config.core(), config.storage.url
    debate_id = await cut_short(url, settings)
    asked: list[str] = []

    async def attach(record: DebateRecord, bindings: dict[str, str]) -> EventSink | None:
        asked.append(record.id)
        raise NowhereToRun("Rostra was removed from this workspace")

    async with engine(url, settings) as manager:
        recovery = Recovery(manager, resume=True, heartbeat_seconds=settings.storage.heartbeat_seconds)
        assert await recovery.resume_debates("terminal", attach) == []
        assert await recovery.resume_debates("terminal", attach) == []
        await recovery.aclose()
        record = await manager.store.get_debate(debate_id)
        events = await manager.store.events(debate_id)
    assert asked == [debate_id]  # closed at the first look
    assert record is not None and record.status == "stopped"
    assert "Rostra was removed from this workspace" in record.reason
    end = events[-1]
    assert isinstance(end, DebateCompleted) and end.reason == "stopped"


async def test_a_debate_another_process_runs_is_named_in_the_log_once_not_at_every_look(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The failover look repeats every heartbeat; a debate left to its live owner was an info line
    each time, for each such debate: noise in every worker's log."""
    config = make_config(tmp_path)
    settings, url = config.core(), config.storage.url

    async def attach(record: DebateRecord, bindings: dict[str, str]) -> EventSink | None:
        raise AssertionError("a debate its owner runs is not attached here")

    async with engine(url, settings) as owner, engine(url, settings) as other:
        handle = await owner.start(SPEC, RecordingSink(), seed=4)
        recovery = Recovery(other, resume=True, heartbeat_seconds=settings.storage.heartbeat_seconds)
        with caplog.at_level(logging.INFO, logger="core.recovery"):
            for _ in range(3):
                assert await recovery.resume_debates("terminal", attach) == []
        await recovery.aclose()
        await handle.stop("test over")
    said = [r for r in caplog.records if "runs in another process" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO]
