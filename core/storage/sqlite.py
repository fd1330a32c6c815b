"""The SQLite store: a debates table and an append-only event log, through aiosqlite in WAL mode."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite

from core.errors import StoreError
from core.events import Event, dump_event, load_event
from core.ports import Binding, DebateRecord, DebateStatus

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS debates (
    id          TEXT PRIMARY KEY,
    format      TEXT NOT NULL,
    topic       TEXT NOT NULL,
    spec        TEXT NOT NULL,
    status      TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    platform    TEXT NOT NULL DEFAULT '',
    scope       TEXT NOT NULL DEFAULT '',
    channel     TEXT NOT NULL DEFAULT '',
    started_by  TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS debates_by_status ON debates (status, created_at);
CREATE TABLE IF NOT EXISTS events (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    at          TEXT NOT NULL,
    payload     TEXT NOT NULL,
    PRIMARY KEY (debate_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS model_calls (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    n           INTEGER NOT NULL,
    payload     TEXT NOT NULL,
    PRIMARY KEY (debate_id, key, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bindings (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (debate_id, key)
) WITHOUT ROWID;
"""


def sqlite_path(url: str) -> Path:
    """`sqlite:///relative/or/absolute/path.db` → a path (with `~` expanded)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        raise StoreError(f"Unsupported storage URL {url!r}: use sqlite:///path/to/rostra.db")
    raw = url[len(prefix) :]
    if not raw:
        raise StoreError("The storage URL has no file path: use sqlite:///path/to/rostra.db")
    return Path(raw).expanduser()


def _now() -> str:
    return datetime.now(UTC).isoformat()


class SQLiteStore:
    """One SQLite file. Every append commits, so a delivered event is always on disk."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    @classmethod
    async def open(cls, path: Path) -> SQLiteStore:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path)
        try:
            conn.row_factory = aiosqlite.Row
            await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute("PRAGMA synchronous=NORMAL")
            await conn.execute("PRAGMA foreign_keys=ON")
            await conn.execute("PRAGMA busy_timeout=5000")
            await conn.executescript(_SCHEMA)
            async with conn.execute("SELECT version FROM schema_version") as cur:
                row = await cur.fetchone()
            if row is None:
                await conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            elif row["version"] != SCHEMA_VERSION:
                raise StoreError(
                    f"{path} has schema version {row['version']}; this Rostra expects {SCHEMA_VERSION}"
                )
            await conn.commit()
        except BaseException:
            await conn.close()
            raise
        return cls(conn, path)

    async def close(self) -> None:
        await self._conn.close()

    async def create_debate(self, record: DebateRecord) -> None:
        b = record.binding
        await self._conn.execute(
            "INSERT INTO debates (id, format, topic, spec, status, reason, platform, scope, channel,"
            " started_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                record.id,
                record.format,
                record.topic,
                json.dumps(record.spec),
                record.status,
                record.reason,
                b.platform,
                b.scope,
                b.channel,
                b.started_by,
                record.created_at.isoformat(),
                record.updated_at.isoformat(),
            ),
        )
        await self._conn.commit()

    async def append(self, event: Event) -> None:
        async with self._conn.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE debate_id = ?", (event.debate_id,)
        ) as cur:
            row = await cur.fetchone()
        last = int(row[0]) if row is not None else 0
        if event.seq != last + 1:
            raise StoreError(f"event seq {event.seq} for debate {event.debate_id} does not follow {last}")
        await self._conn.execute(
            "INSERT INTO events (debate_id, seq, kind, at, payload) VALUES (?,?,?,?,?)",
            (event.debate_id, event.seq, event.kind, event.at.isoformat(), dump_event(event)),
        )
        await self._conn.commit()

    async def events(self, debate_id: str) -> list[Event]:
        async with self._conn.execute(
            "SELECT payload FROM events WHERE debate_id = ? ORDER BY seq", (debate_id,)
        ) as cur:
            rows = await cur.fetchall()
        return [load_event(r["payload"]) for r in rows]

    async def get_debate(self, debate_id: str) -> DebateRecord | None:
        async with self._conn.execute("SELECT * FROM debates WHERE id = ?", (debate_id,)) as cur:
            row = await cur.fetchone()
        return _record(row) if row is not None else None

    async def list_debates(self, limit: int = 20) -> Sequence[DebateRecord]:
        async with self._conn.execute(
            "SELECT * FROM debates ORDER BY created_at DESC, id LIMIT ?", (limit,)
        ) as cur:
            rows = await cur.fetchall()
        return [_record(r) for r in rows]

    async def debates_with_status(self, status: DebateStatus) -> Sequence[DebateRecord]:
        async with self._conn.execute(
            "SELECT * FROM debates WHERE status = ? ORDER BY created_at", (status,)
        ) as cur:
            rows = await cur.fetchall()
        return [_record(r) for r in rows]

    async def set_status(self, debate_id: str, status: DebateStatus, reason: str = "") -> None:
        await self._conn.execute(
            "UPDATE debates SET status = ?, reason = ?, updated_at = ? WHERE id = ?",
            (status, reason, _now(), debate_id),
        )
        await self._conn.commit()

    async def set_binding_value(self, debate_id: str, key: str, value: str) -> None:
        await self._conn.execute(
            "INSERT INTO bindings (debate_id, key, value) VALUES (?,?,?)"
            " ON CONFLICT (debate_id, key) DO UPDATE SET value = excluded.value",
            (debate_id, key, value),
        )
        await self._conn.commit()

    async def record_call(self, debate_id: str, key: str, n: int, payload: str) -> None:
        await self._conn.execute(
            "INSERT OR REPLACE INTO model_calls (debate_id, key, n, payload) VALUES (?,?,?,?)",
            (debate_id, key, n, payload),
        )
        await self._conn.commit()

    async def calls(self, debate_id: str) -> dict[tuple[str, int], str]:
        async with self._conn.execute(
            "SELECT key, n, payload FROM model_calls WHERE debate_id = ?", (debate_id,)
        ) as cur:
            rows = await cur.fetchall()
        return {(r["key"], int(r["n"])): r["payload"] for r in rows}

    async def binding_values(self, debate_id: str) -> dict[str, str]:
        async with self._conn.execute(
            "SELECT key, value FROM bindings WHERE debate_id = ?", (debate_id,)
        ) as cur:
            rows = await cur.fetchall()
        return {r["key"]: r["value"] for r in rows}


def _record(row: Any) -> DebateRecord:
    return DebateRecord(
        id=row["id"],
        format=row["format"],
        topic=row["topic"],
        spec=json.loads(row["spec"]),
        status=row["status"],
        reason=row["reason"],
        binding=Binding(
            platform=row["platform"],
            scope=row["scope"],
            channel=row["channel"],
            started_by=row["started_by"],
        ),
        created_at=datetime.fromisoformat(row["created_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
    )


async def open_store(url: str) -> SQLiteStore:
    return await SQLiteStore.open(sqlite_path(url))
