"""A SQLite file for the store: where the URL points, the writer's connection, and the schema brought
up to date (a file an older Rostra wrote is upgraded in place; one a newer Rostra wrote is refused)."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from pathlib import Path

from core.errors import StoreError
from core.settings import StorageSettings
from core.storage import sql
from core.storage.installations import LEGACY_TABLES

log = logging.getLogger(__name__)


def sqlite_path(url: str) -> Path:
    """`sqlite:///relative/or/absolute/path.db` → a path (with `~` expanded)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        raise StoreError(
            f"Unsupported storage URL {url!r}: use sqlite:///path/to/rostra.db or postgresql://…"
        )
    raw = url[len(prefix) :]
    if not raw:
        raise StoreError("The storage URL has no file path: use sqlite:///path/to/rostra.db")
    return Path(raw).expanduser()


SETUP_RETRY = 0.05
"""Seconds between tries to set a file up while another process is setting it up too."""


def connect_writer(path: Path, settings: StorageSettings) -> sqlite3.Connection:
    """The writer's connection, set up and migrated (on the writer thread, so it may sleep).

    Two processes opening one file at the same moment (two workers started together) can get
    "database is locked" from the switch to WAL mode without SQLite's busy handler being asked;
    the setup is tried again for up to `storage.busy_timeout` seconds, as a busy write would be."""
    deadline = time.monotonic() + settings.busy_timeout
    while True:
        try:
            return _set_up(path, settings)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(SETUP_RETRY)


def _set_up(path: Path, settings: StorageSettings) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={int(settings.busy_timeout * 1000)}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _migrate(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Create the schema, or bring an older file up to date (in one transaction)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        existing = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        version: int | None = None
        if existing is not None:
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            version = int(row["version"]) if row is not None else None
        if version is not None and version > sql.SCHEMA_VERSION:
            raise StoreError(f"{path} has schema version {version}; this Rostra expects {sql.SCHEMA_VERSION}")
        if version == 1:
            for statement in sql.MIGRATE_1_TO_2:
                conn.execute(statement)
        if version in (1, 2):
            conn.execute(sql.SQLITE.migrate_2_to_3)
            log.info("%s: schema upgraded from version %d to %d", path, version, sql.SCHEMA_VERSION)
        for statement in sql.SQLITE.schema:
            conn.execute(statement)
        for table, move in LEGACY_TABLES:
            if conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone():
                conn.execute(move)
                conn.execute(f"DROP TABLE {table}")
                log.info("%s: the rows of %s moved into the shared tables", path, table)
        if version is None:
            conn.execute("DELETE FROM schema_version")
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (sql.SCHEMA_VERSION,))
        elif version != sql.SCHEMA_VERSION:
            conn.execute("UPDATE schema_version SET version = ?", (sql.SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")
        raise
