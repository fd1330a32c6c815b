"""The stores behind `core.ports.Store`: SQLite (one machine, the default) and Postgres (many)."""

from __future__ import annotations

from core.errors import StoreError
from core.ports import Store
from core.settings import StorageSettings


async def open_store(url: str, settings: StorageSettings | None = None) -> Store:
    """The store a storage URL names: `sqlite:///path` or `postgresql://…` (asyncpg)."""
    settings = settings or StorageSettings(url=url)
    if url.startswith(("postgresql://", "postgres://")):
        from core.storage.postgres import PostgresStore

        return await PostgresStore.open(url, settings)
    if url.startswith("sqlite:///"):
        from core.storage.sqlite import SQLiteStore, sqlite_path

        return await SQLiteStore.open(sqlite_path(url), settings)
    raise StoreError(
        f"Unsupported storage URL {url!r}: use sqlite:///path/to/rostra.db or postgresql://user@host/db"
    )
