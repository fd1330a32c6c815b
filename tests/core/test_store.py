"""The SQLite store on real files: debates table, append-only gap-free log, bindings, transcripts."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.errors import StoreError
from core.events import DebateCompleted, Notice, PhaseChanged, load_event
from core.models import Statistics
from core.ports import Binding, DebateRecord
from core.storage.sqlite import SQLiteStore, open_store, sqlite_path
from core.transcript import to_json_lines, to_markdown
from tests.core.runs import run_debate


def record(debate_id: str = "d1", **changes: object) -> DebateRecord:
    now = datetime.now(UTC)
    base = dict(
        id=debate_id,
        format="arena",
        topic="Tabs?",
        spec={"options": {}},
        status="running",
        binding=Binding(platform="discord", scope="g1", channel="c1", started_by="u1"),
        created_at=now,
        updated_at=now,
    )
    base.update(changes)
    return DebateRecord.model_validate(base)


async def test_events_round_trip_and_seq_must_not_skip(tmp_path: Path) -> None:
    store = await SQLiteStore.open(tmp_path / "r.db")
    try:
        await store.create_debate(record())
        await store.append(PhaseChanged(debate_id="d1", seq=1, phase="debating"))
        await store.append(Notice(debate_id="d1", seq=2, level="info", code="x", message="hello"))
        with pytest.raises(StoreError, match="does not follow 2"):
            await store.append(Notice(debate_id="d1", seq=4, level="info", code="x", message="gap"))
        with pytest.raises(StoreError):
            await store.append(Notice(debate_id="d1", seq=2, level="info", code="x", message="again"))
        events = await store.events("d1")
        assert [(e.seq, e.kind) for e in events] == [(1, "phase_changed"), (2, "notice")]
        assert isinstance(events[1], Notice) and events[1].message == "hello"
    finally:
        await store.close()


async def test_debates_status_bindings_and_listing_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = await SQLiteStore.open(path)
    await store.create_debate(record("a"))
    await store.create_debate(record("b"))
    await store.set_status("a", "completed", "time ran out")
    await store.set_binding_value("b", "thread", "123")
    await store.set_binding_value("b", "thread", "456")
    await store.close()

    store = await SQLiteStore.open(path)
    try:
        a = await store.get_debate("a")
        assert a is not None and (a.status, a.reason) == ("completed", "time ran out")
        assert a.binding == Binding(platform="discord", scope="g1", channel="c1", started_by="u1")
        assert [r.id for r in await store.debates_with_status("running")] == ["b"]
        assert await store.binding_values("b") == {"thread": "456"}
        assert {r.id for r in await store.list_debates()} == {"a", "b"}
        assert await store.get_debate("nope") is None
    finally:
        await store.close()
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_storage_urls() -> None:
    assert sqlite_path("sqlite:///data/rostra.db") == Path("data/rostra.db")
    assert sqlite_path("sqlite:////abs/r.db") == Path("/abs/r.db")
    with pytest.raises(StoreError, match="Unsupported storage URL"):
        sqlite_path("postgres://x")


async def test_a_whole_debate_is_stored_and_renders_as_a_transcript(tmp_path: Path) -> None:
    script = {"observer": [{"vote": "replace", "reason": "needs fresh legs"}]}
    run = await run_debate(tmp_path, script=script, options={"rounds": 2, "exchanges_per_round": 1})
    store = await open_store(f"sqlite:///{tmp_path / 'rostra.db'}")
    try:
        rec = await store.get_debate(run.debate_id)
        events = await store.events(run.debate_id)
    finally:
        await store.close()
    assert rec is not None and rec.status == "completed" and rec.spec["seed"] == 1
    md = to_markdown(rec, events)
    assert md.startswith("# Should cities ban cars?")
    assert "## Round 1 · for the motion:" in md and "## Closing summary: 🎙️ Sol Amari" in md
    assert "(AI) → replace: needs fresh legs" in md
    assert "**Switch:**" in md and "## Statistics" in md and "| 🪨 Vera Stone | 2 |" in md
    lines = to_json_lines(events).splitlines()
    assert len(lines) == len(events)
    assert isinstance(load_event(lines[-1]), DebateCompleted)
    assert Statistics.model_validate(load_event(lines[-1]).model_dump()["stats"]) == run.result.stats
