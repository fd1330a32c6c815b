"""What Rostra writes holds private data: databases, transcripts and output files are created 0600
in 0700 folders whatever the umask; files and folders that already exist keep their modes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.ports import DebateRecord
from core.settings import StorageSettings
from core.storage.sqlite import SQLiteStore
from tests.helpers import REPO


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


async def test_a_new_database_and_its_folders_are_the_owners_only(tmp_path: Path, open_umask: None) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    path = shared / "data" / "nested" / "rostra.db"
    store = await SQLiteStore.open(path, StorageSettings())
    try:
        now = datetime.now(UTC)
        record = DebateRecord(
            id="d1",
            format="arena",
            topic="Private?",
            spec={},
            status="running",
            created_at=now,
            updated_at=now,
        )
        await store.create_debate(record)
    finally:
        await store.close()
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700 and mode(path.parent.parent) == 0o700
    assert mode(shared) == 0o755  # a folder that was there keeps its mode
    for side in path.parent.glob("rostra.db-*"):
        assert mode(side) == 0o600, side


def test_a_transcript_written_to_a_file_is_the_owners_only(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env["ROSTRA_STORAGE__URL"] = f"sqlite:///{tmp_path / 'r.db'}"
    run = [
        sys.executable,
        "-c",
        "import os, runpy, sys; os.umask(0o022); sys.argv[0] = 'rostra';"
        " runpy.run_module('bot', run_name='__main__')",
    ]
    demo = subprocess.run(
        [*run, "demo", "Private?", "--fast", "--exchanges", "1"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert demo.returncode == 0, demo.stderr
    [debate_id] = asyncio.run(_debate_ids(tmp_path / "r.db"))
    out = tmp_path / "t.md"
    written = subprocess.run(
        [*run, "transcript", debate_id, "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert written.returncode == 0, written.stderr
    assert mode(out) == 0o600 and "Private?" in out.read_text(encoding="utf-8")


async def _debate_ids(path: Path) -> list[str]:
    store = await SQLiteStore.open(path, StorageSettings())
    try:
        return [r.id for r in await store.list_debates()]
    finally:
        await store.close()
