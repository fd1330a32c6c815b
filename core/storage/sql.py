"""The SQL both stores speak: the schema, every statement, and a debates row as a DebateRecord.

Statements are written once, in Postgres's numbered style (`$1`), and given to SQLite as `?1` (the
same numbered parameters). What the two dialects spell differently is filled in per dialect: column
types, the row lock a write takes on Postgres (SQLite locks the whole file instead), and how a list
of ids is passed.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from core.errors import StoreError, StoreUnavailable, UnreadableDebate
from core.events import Event, load_event
from core.ports import Binding, DebateRecord

log = logging.getLogger(__name__)

SCHEMA_VERSION = 5

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
    updated_at  TEXT NOT NULL,
    owner       TEXT NOT NULL DEFAULT '',
    lease_until {real} NOT NULL DEFAULT 0,
    lease_token {bigint} NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS debates_by_status ON debates (status, created_at);
CREATE TABLE IF NOT EXISTS events (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    at          TEXT NOT NULL,
    payload     TEXT NOT NULL,
    PRIMARY KEY (debate_id, seq)
){without_rowid};
CREATE TABLE IF NOT EXISTS model_calls (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    n           INTEGER NOT NULL,
    payload     TEXT NOT NULL,
    PRIMARY KEY (debate_id, key, n)
){without_rowid};
CREATE TABLE IF NOT EXISTS bindings (
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (debate_id, key)
){without_rowid};
CREATE TABLE IF NOT EXISTS votes_inbox (
    id          {serial},
    debate_id   TEXT NOT NULL REFERENCES debates (id) ON DELETE CASCADE,
    payload     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS debates_by_channel ON debates (platform, channel, status);
CREATE TABLE IF NOT EXISTS claims (
    platform    TEXT NOT NULL,
    channel     TEXT NOT NULL,
    scope       TEXT NOT NULL,
    person      TEXT NOT NULL,
    worker      TEXT NOT NULL,
    debate_id   TEXT NOT NULL DEFAULT '',
    expires_at  {real} NOT NULL,
    PRIMARY KEY (platform, channel)
){without_rowid};
CREATE TABLE IF NOT EXISTS cooldowns (
    platform    TEXT NOT NULL,
    person      TEXT NOT NULL,
    started_at  {real} NOT NULL,
    PRIMARY KEY (platform, person)
){without_rowid};
CREATE TABLE IF NOT EXISTS deliveries (
    key         TEXT PRIMARY KEY,
    expires_at  {real} NOT NULL
){without_rowid};
CREATE INDEX IF NOT EXISTS deliveries_by_expiry ON deliveries (expires_at);
CREATE TABLE IF NOT EXISTS workers (
    id          TEXT PRIMARY KEY,
    role        TEXT NOT NULL,
    alive_until {real} NOT NULL
){without_rowid};
CREATE TABLE IF NOT EXISTS installations (
    platform    TEXT NOT NULL,
    key         TEXT NOT NULL,
    installed_at {real} NOT NULL,
    data        TEXT NOT NULL,
    PRIMARY KEY (platform, key)
){without_rowid};
CREATE TABLE IF NOT EXISTS install_states (
    state       TEXT PRIMARY KEY,
    expires_at  {real} NOT NULL
){without_rowid};
"""

# Version 1 had no lease (SQLite only; Postgres began at 2); version 2 had no fencing token; version 3
# had no cluster tables (claims, cooldowns, deliveries, workers: created as the schema is, if absent);
# version 4 had no installation tables (their rows were Slack's own: core.storage.installations).
MIGRATE_1_TO_2 = (
    "ALTER TABLE debates ADD COLUMN owner TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE debates ADD COLUMN lease_until REAL NOT NULL DEFAULT 0",
)
MIGRATE_2_TO_3 = "ALTER TABLE debates ADD COLUMN lease_token {bigint} NOT NULL DEFAULT 0"


@dataclass(frozen=True)
class Statements:
    """Every statement of the stores, in one dialect."""

    schema: tuple[str, ...]
    insert_debate: str
    migrate_2_to_3: str
    # an append in one statement: stored only if the caller's lease token is the debate's (see
    # core.storage.leases) and its seq follows the last stored one; one it refuses is looked at
    # again to say why
    checked_insert: str
    fence: str
    lease_row: str
    last_seq: str
    stored_payload: str
    insert_event: str
    lease_of: str
    take_lease: str
    release: str
    release_all: str
    renew: str
    owners_of: str
    set_running: str
    set_ended: str
    upsert_binding: str
    insert_call: str
    insert_vote: str
    take_votes: str
    waiting_votes: str
    events: str
    debate: str
    list_debates: str
    with_status: str
    calls: str
    binding_values: str
    running_values: str


_STATEMENTS = Statements(
    schema=(),
    insert_debate=(
        "INSERT INTO debates (id, format, topic, spec, status, reason, platform, scope, channel,"
        " started_by, created_at, updated_at, owner, lease_until, lease_token)"
        " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,1)"
    ),
    migrate_2_to_3=MIGRATE_2_TO_3,
    checked_insert=(
        "INSERT INTO events (debate_id, seq, kind, at, payload)"
        " SELECT $1, $2, $3, $4, $5 FROM debates"
        " WHERE id = $1 AND owner IN ('', $6) AND lease_token = $7"
        " AND (SELECT COALESCE(MAX(seq), 0) FROM events WHERE debate_id = $1) = $2 - 1{lock}"
    ),
    # the row, locked, when the caller may write it (else nothing: `lease_row` tells why)
    fence=(
        "SELECT owner, lease_token FROM debates"
        " WHERE id = $1 AND owner IN ('', $2) AND lease_token = $3{lock}"
    ),
    lease_row="SELECT owner, lease_token FROM debates WHERE id = $1",
    last_seq="SELECT COALESCE(MAX(seq), 0) FROM events WHERE debate_id = $1",
    stored_payload="SELECT payload FROM events WHERE debate_id = $1 AND seq = $2",
    insert_event="INSERT INTO events (debate_id, seq, kind, at, payload) VALUES ($1,$2,$3,$4,$5)",
    lease_of="SELECT owner, lease_until, lease_token FROM debates WHERE id = $1{lock}",
    # taking the lease raises the fencing token: every write of an earlier holder is refused
    take_lease=(
        "UPDATE debates SET owner = $1, lease_until = $2, lease_token = lease_token + 1"
        " WHERE id = $3 AND owner = $4 AND lease_token = $5 RETURNING lease_token"
    ),
    release="UPDATE debates SET owner = '', lease_until = 0 WHERE id = $1 AND owner = $2",
    release_all="UPDATE debates SET owner = '', lease_until = 0 WHERE owner = $1",
    renew="UPDATE debates SET lease_until = $1 WHERE owner = $2 AND id {any}$3{any_end} RETURNING id",
    owners_of="SELECT id, owner, lease_token FROM debates WHERE id {any}$1{any_end}",
    set_running="UPDATE debates SET status = $1, reason = $2, updated_at = $3 WHERE id = $4",
    set_ended=(
        "UPDATE debates SET status = $1, reason = $2, updated_at = $3, owner = '', lease_until = 0"
        " WHERE id = $4"
    ),
    upsert_binding=(
        "INSERT INTO bindings (debate_id, key, value) VALUES ($1,$2,$3)"
        " ON CONFLICT (debate_id, key) DO UPDATE SET value = excluded.value"
    ),
    insert_call=(
        "INSERT INTO model_calls (debate_id, key, n, payload) VALUES ($1,$2,$3,$4)"
        " ON CONFLICT (debate_id, key, n) DO NOTHING"
    ),
    insert_vote="INSERT INTO votes_inbox (debate_id, payload) VALUES ($1, $2)",
    take_votes="DELETE FROM votes_inbox WHERE debate_id = $1 RETURNING id, payload",
    waiting_votes="SELECT payload FROM votes_inbox WHERE debate_id = $1 ORDER BY id",
    events="SELECT payload FROM events WHERE debate_id = $1 ORDER BY seq",
    debate="SELECT * FROM debates WHERE id = $1",
    list_debates="SELECT * FROM debates ORDER BY created_at DESC, id LIMIT $1",
    with_status="SELECT * FROM debates WHERE status = $1 ORDER BY created_at",
    calls="SELECT key, n, payload FROM model_calls WHERE debate_id = $1",
    binding_values="SELECT key, value FROM bindings WHERE debate_id = $1",
    running_values=(
        "SELECT v.value AS value, COUNT(*) AS n FROM debates d"
        " JOIN bindings w ON w.debate_id = d.id AND w.key = $2 AND w.value = $3"
        " JOIN bindings v ON v.debate_id = d.id AND v.key = $1"
        " WHERE d.status = 'running' GROUP BY v.value"
    ),
)


def spell(sql: str, words: dict[str, str], numbered: str) -> str:
    """A statement in one dialect: its words filled in, its parameters numbered the dialect's way."""
    return re.sub(r"\$(\d+)", numbered, sql.format(**words))


def _dialect(words: dict[str, str], numbered: str) -> Statements:
    schema = tuple(s.strip() for s in _SCHEMA.format(**words).split(";") if s.strip())
    spelled = {
        f.name: spell(getattr(_STATEMENTS, f.name), words, numbered)
        for f in fields(Statements)
        if f.name != "schema"
    }
    return Statements(schema=schema, **spelled)


POSTGRES_WORDS = {
    "real": "DOUBLE PRECISION",
    "without_rowid": "",
    "bigint": "BIGINT",
    "serial": "BIGSERIAL PRIMARY KEY",
    "lock": " FOR NO KEY UPDATE OF debates",  # does not block votes (a foreign key's share lock)
    "any": "= ANY(",
    "any_end": "::text[])",
}
SQLITE_WORDS = {
    "real": "REAL",
    "without_rowid": " WITHOUT ROWID",
    "bigint": "INTEGER",
    "serial": "INTEGER PRIMARY KEY AUTOINCREMENT",
    "lock": "",  # the writer's transaction holds the whole file's write lock
    "any": "IN (SELECT value FROM json_each(",
    "any_end": "))",
}
POSTGRES_NUMBERED = r"$\1"
SQLITE_NUMBERED = r"?\1"
POSTGRES = _dialect(POSTGRES_WORDS, POSTGRES_NUMBERED)
SQLITE = _dialect(SQLITE_WORDS, SQLITE_NUMBERED)


# Postgres: the first append of each debate in a batch, all in one statement (one round trip), each
# row fenced and seq-checked as `checked_insert` does; the debates it stored come back. Whatever it
# did not store runs as a write of its own, which says why.
POSTGRES_APPEND_MANY = (
    "INSERT INTO events (debate_id, seq, kind, at, payload)"
    " SELECT v.debate_id, v.seq, v.kind, v.at, v.payload"
    " FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[])"
    " AS v (debate_id, seq, kind, at, payload, token)"
    " JOIN debates d ON d.id = v.debate_id AND d.owner IN ('', $7) AND d.lease_token = v.token"
    " WHERE (SELECT COALESCE(MAX(e.seq), 0) FROM events e WHERE e.debate_id = v.debate_id) = v.seq - 1"
    " FOR NO KEY UPDATE OF d"
    " RETURNING debate_id"
)


def sqlite_ids(ids: list[str]) -> str:
    """A list of ids as SQLite's `json_each` takes it (Postgres takes the list itself)."""
    return json.dumps(ids)


def now_text() -> str:
    return datetime.now(UTC).isoformat()


def debate_row(record: DebateRecord, owner: str, lease_until: float) -> tuple[Any, ...]:
    """The parameters of `insert_debate` for a new debate owned by `owner`."""
    b = record.binding
    return (
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
        owner,
        lease_until,
    )


def record_of(row: Any) -> DebateRecord:
    """A debates row (sqlite3.Row, aiosqlite.Row or asyncpg.Record) as a DebateRecord; raises
    UnreadableDebate when the row no longer loads."""
    try:
        return _record(row)
    except (ValueError, TypeError, KeyError) as exc:  # json and pydantic errors are ValueErrors
        raise UnreadableDebate(str(row["id"]), f"its stored row does not load ({_first_line(exc)})") from None


def readable_records(rows: Iterable[Any]) -> list[DebateRecord]:
    """The rows that load, as DebateRecords; each one that does not is named in the log and left out."""
    records = []
    for row in rows:
        try:
            records.append(record_of(row))
        except UnreadableDebate as exc:
            log.warning("%s; left out", exc)
    return records


def events_of(debate_id: str, payloads: Iterable[str]) -> list[Event]:
    """A debate's stored events, in order; raises UnreadableDebate naming the first that does not load."""
    events = []
    for seq, payload in enumerate(payloads, start=1):
        try:
            events.append(load_event(payload))
        except ValueError as exc:
            raise UnreadableDebate(debate_id, f"its event {seq} does not load ({_first_line(exc)})") from None
    return events


def _first_line(exc: Exception) -> str:
    """The gist of why something did not load, on one line."""
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


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
        owner=row["owner"],
        lease_until=float(row["lease_until"]),
    )


def fault(exc: BaseException, *, transient: bool) -> StoreError:
    """A driver's error as the store's own: StoreUnavailable when retrying may help."""
    if isinstance(exc, StoreError):
        return exc
    text = str(exc) or type(exc).__name__
    if transient:
        return StoreUnavailable(f"the database is unavailable: {text}")
    return StoreError(f"the database refused a write: {text}")
