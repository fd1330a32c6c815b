"""Every exit is clean: Ctrl+C and SIGTERM end a command with one line, a documented exit code and
the debate stored as interrupted (resumable); no traceback reaches the terminal."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from bot.exits import EXIT_CTRL_C


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(
        ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}", COLUMNS="120", AGNO_TELEMETRY="false"
    )
    return env


async def stop_midway(tmp_path: Path, sig: int, *args: str, when: str = "Round 1") -> tuple[int, str]:
    """Start `rostra *args`, send `sig` once `when` is on the screen; the exit code and all it printed."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, cwd=tmp_path, env=_env(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    seen = b""
    while when.encode() not in seen:
        chunk = await asyncio.wait_for(proc.stdout.read(256), 60)
        assert chunk, f"ended before {when!r}: {seen.decode(errors='replace')[-500:]}"
        seen += chunk
    await asyncio.sleep(0.3)  # mid-turn
    proc.send_signal(sig)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, (seen + out).decode(errors="replace") + err.decode(errors="replace")


def statuses(tmp_path: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(tmp_path / "rostra.db")
    try:
        return db.execute("SELECT id, status FROM debates").fetchall()
    finally:
        db.close()


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, EXIT_CTRL_C), (signal.SIGTERM, 0)])
async def test_a_signal_stops_the_demo_with_one_line_and_the_debate_resumable(
    tmp_path: Path, sig: int, code: int
) -> None:
    returned, text = await stop_midway(tmp_path, sig, "demo", "Should cities ban cars?")
    assert returned == code, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text and "CancelledError" not in text
    [(debate_id, status)] = statuses(tmp_path)
    assert status == "interrupted"
    assert text.count(f"rostra resume {debate_id}") == 1


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, EXIT_CTRL_C), (signal.SIGTERM, 0)])
async def test_a_signal_stops_a_resumed_debate_the_same_way(tmp_path: Path, sig: int, code: int) -> None:
    await stop_midway(tmp_path, signal.SIGTERM, "demo", "Should cities ban cars?")
    [(debate_id, _)] = statuses(tmp_path)
    returned, text = await stop_midway(tmp_path, sig, "resume", debate_id, when="resumed")
    assert returned == code, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    assert statuses(tmp_path) == [(debate_id, "interrupted")]
    assert f"rostra resume {debate_id}" in text


async def test_the_panel_refuses_to_start_where_it_cannot_write_its_report(tmp_path: Path) -> None:
    docs = []
    for name, text in (
        ("a.md", "Trams carry more people per lane."),
        ("b.md", "Shops lost a third of trade."),
    ):
        (tmp_path / name).write_text(text, encoding="utf-8")
        docs += ["--doc", str(tmp_path / name)]
    unwritable = Path("/proc")  # not writable even for root, unlike a chmod-ed folder
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "demo", "--format", "panel", *docs, "--fast", "x",
        cwd=unwritable, env=_env(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rostra: the panel writes its report to /proc")
    assert "not writable" in lines[0] and not out.strip()  # before the debate started: nothing shown
    assert not (tmp_path / "rostra.db").exists() or statuses(tmp_path) == []


async def test_the_side_that_loses_a_race_to_resume_shows_only_its_refusal(tmp_path: Path) -> None:
    await stop_midway(tmp_path, signal.SIGTERM, "demo", "Should cities ban cars?")
    [(debate_id, _)] = statuses(tmp_path)
    args = (sys.executable, "-m", "bot", "resume", debate_id, "--fast")
    pipe = asyncio.subprocess.PIPE
    both = [
        await asyncio.create_subprocess_exec(
            *args, cwd=tmp_path, env=_env(tmp_path), stdout=pipe, stderr=pipe
        )
        for _ in "ab"
    ]
    ends = [await asyncio.wait_for(p.communicate(), 90) for p in both]
    codes = [p.returncode for p in both]
    assert sorted(c or 0 for c in codes) == [0, 2], codes  # one resumes it to its end, one is refused
    out, err = ends[codes.index(2)]
    assert out.decode().strip() == ""  # no history, no banner, no heading before the refusal
    [line] = err.decode().strip().splitlines()
    assert line.startswith("rostra: ") and debate_id in line
    assert statuses(tmp_path) == [(debate_id, "completed")]
