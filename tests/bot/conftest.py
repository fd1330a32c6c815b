"""What the bot tests share: the database a test's processes use, on each backend."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A SQLite file in the test's folder, or the session's real Postgres (tests/conftest.py)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'rostra.db'}"
    return str(request.getfixturevalue("postgres_url"))
