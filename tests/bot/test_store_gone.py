"""Store outages end honestly in the terminal: a database file deleted or replaced under a running
debate is a store outage; past the limit the debate stops saying so and how to resume it."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import DebateCompleted, Event, TurnCompleted
from core.spec import DebateSpec
from tests.helpers import RecordingSink, make_config

TOPIC = "Should cities ban cars?"
QUICK_OUTAGE = {"heartbeat_seconds": 0.1, "lease_seconds": 1.0, "outage_limit": 0.5, "retry_max": 0.1}


@pytest.mark.parametrize("how", ["deleted", "replaced"])
async def test_a_database_file_gone_under_a_debate_is_a_store_outage(tmp_path: Path, how: str) -> None:
    db = tmp_path / "rostra.db"
    config = make_config(tmp_path, storage={"url": f"sqlite:///{db}", **QUICK_OUTAGE})
    sink = RecordingSink()

    async def pull_the_file(event: Event) -> None:
        if isinstance(event, TurnCompleted) and event.turn_id == "t2":
            if how == "deleted":
                db.unlink()
            else:  # a restore from a backup: another file at the same path
                shutil.copy(db, tmp_path / "backup.db")
                os.replace(tmp_path / "backup.db", db)
            await asyncio.sleep(0.3)  # a heartbeat goes by

    sink.hooks.append(pull_the_file)
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(DebateSpec("arena", TOPIC, {"rounds": 3, "humans": "off"}), sink)
        result = await asyncio.wait_for(handle.wait(), 30)
    assert result.reason == "interrupted"
    assert f"the database file {db} was {how}" in result.detail
    assert not sink.of(DebateCompleted)  # it did not run to its end on a file no one reads
    said = [e.seq for e in sink.events]
    assert said == sorted(said)


async def test_the_terminal_says_the_debate_stopped_and_how_to_resume(tmp_path: Path) -> None:
    db = tmp_path / "rostra.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(ROSTRA_STORAGE__URL=f"sqlite:///{db}", COLUMNS="120", AGNO_TELEMETRY="false")
    env.update({f"ROSTRA_STORAGE__{k.upper()}": str(v) for k, v in QUICK_OUTAGE.items()})
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "demo", TOPIC, cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    seen = b""
    while b"Round 1" not in seen:
        chunk = await asyncio.wait_for(proc.stdout.read(256), 60)
        assert chunk, seen.decode(errors="replace")
        seen += chunk
    db.unlink()
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    text = (seen + out).decode(errors="replace") + err.decode(errors="replace")
    assert proc.returncode == 1, text
    assert "Traceback" not in text
    shown = " ".join((seen + out).decode(errors="replace").split())  # the terminal wraps long lines
    said = shown[shown.index("Stopped: ") :]
    assert said.startswith("Stopped: the database was unavailable") and "rostra.db was deleted" in said
    assert said.endswith("is saved: rostra resume " + said.split()[-1])  # the last thing shown
    assert "Saved as debate" not in text
