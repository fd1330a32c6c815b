"""`rostra debates` and `rostra usage` at 80 columns and in a pipe: what people scan stays whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

from rich.console import Console, RenderableType

from bot.usage_report import debates_table, usage_table
from core.events import Event, TurnCompleted
from core.models import PersonaRef, TokenUsage
from core.ports import Binding, DebateRecord
from tests.helpers import REPO

NOW = datetime.now(UTC)


def rostra(tmp_path: Path, *args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    """`rostra ...` as a process whose output goes to a pipe of `columns` (no key, a temp database)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}", COLUMNS=str(columns))
    env["AGNO_TELEMETRY"] = "false"
    run = [sys.executable, "-m", "bot", *args]
    return subprocess.run(run, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)


LONG_TOPIC = "Should cities ban private cars from their centres within the next decade, and who pays for it?"
STATUSES = {
    "a1b2c3d4": ("completed", ""),
    "b2c3d4e5": ("interrupted", "the bot shut down mid-debate"),
    "c3d4e5f6": ("failed", "model error: overloaded"),
    "d4e5f6a7": ("stopped", "stopped by Ada"),
    "e5f6a7b8": ("running", ""),
}


def records() -> list[DebateRecord]:
    return [
        DebateRecord(
            id=debate_id,
            format="council",
            topic=LONG_TOPIC,
            spec={},
            status=status,
            reason=reason,
            binding=Binding(platform="slack", scope="T0123", channel="C0123456789"),
            created_at=NOW,
            updated_at=NOW,
        )
        for debate_id, (status, reason) in STATUSES.items()
    ]


def rendered(renderable: RenderableType, width: int) -> list[str]:
    console = Console(width=width, file=StringIO(), force_terminal=False)
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return str(out).splitlines()


COSTLY = TokenUsage(
    input_tokens=200, output_tokens=100, cache_read_tokens=9000, cache_write_tokens=310, cost_usd=0.0123
)


def test_at_80_columns_every_status_is_whole_on_its_debates_line() -> None:
    lines = rendered(debates_table(records(), dict.fromkeys(STATUSES, COSTLY), width=80), 80)
    assert all(len(line) <= 80 for line in lines), lines
    assert not any("…" in line for line in lines)
    for debate_id, (status, _) in STATUSES.items():
        row = next(line for line in lines if line.startswith(debate_id))
        assert f" {status} " in row and " council " in row and f"{NOW:%Y-%m-%d %H:%M}" in row
        assert "$0.0123" in row  # the cost fits beside them
    start = next(line for line in lines if line.startswith("ID")).index("Topic")
    words = " ".join(line[start:].strip() for line in lines[2:-1]).split()
    for word in LONG_TOPIC.split():  # the topic wraps, whole
        assert word in words
    assert "(the bot shut down mid-debate)" in " ".join(" ".join(words).split())
    assert lines[-1].startswith("Left out for width: Tokens, Where")


def test_a_wide_terminal_shows_every_column() -> None:
    lines = rendered(debates_table(records(), dict.fromkeys(STATUSES, COSTLY), width=200), 200)
    header = next(line for line in lines if line.startswith("ID"))
    for column in ("Status", "Format", "Where", "Started (UTC)", "Tokens", "Cost", "Topic"):
        assert column in header
    assert "9,610 (cache: 9,000 read, 310 written)" in "\n".join(lines)
    assert not any(line.startswith("Left out") for line in lines)


def test_usage_at_80_columns_keeps_day_format_and_cost() -> None:
    ada = PersonaRef(id="ada", name="Ada", emoji="🧮")
    usage = TokenUsage(
        input_tokens=1200, output_tokens=300, cost_usd=1.5, model="anthropic:claude-sonnet-5-5"
    )
    turn = TurnCompleted(turn_id="t", speaker=ada, role="proposition", round=1, text="x", usage=usage, at=NOW)
    debates: list[tuple[DebateRecord, list[Event]]] = [(records()[0], [turn])]
    table = usage_table(debates, days=1, width=80, today=NOW.date())  # the suite may cross midnight
    assert table is not None
    lines = rendered(table, 80)
    assert all(len(line) <= 80 for line in lines), lines
    row = next(line for line in lines if line.startswith(f"{NOW:%Y-%m-%d}"))
    assert "slack:T0123" in row and " council " in row and row.rstrip().endswith("$1.50")
    assert next(line for line in lines if line.startswith("total")).rstrip().endswith("$1.50")


def test_debates_in_a_pipe_can_be_grepped_and_json_parses(tmp_path: Path) -> None:
    assert rostra(tmp_path, "debates", "--json").stdout == "[]\n"
    demo = rostra(tmp_path, "demo", "Should cities ban private cars from their centres by 2030?", "--fast")
    assert demo.returncode == 0, demo.stderr
    piped = rostra(tmp_path, "debates").stdout
    assert [line for line in piped.splitlines() if " completed " in line], piped  # `| grep completed`
    listed = json.loads(rostra(tmp_path, "debates", "--json").stdout)
    assert [(d["status"], d["format"], d["platform"]) for d in listed] == [("completed", "arena", "terminal")]
    assert listed[0]["topic"].endswith("by 2030?") and listed[0]["usage"]["total_tokens"] >= 0
    usage = json.loads(rostra(tmp_path, "usage", "--json").stdout)
    assert usage["days"] == 30 and usage["total"]["calls"] == sum(r["calls"] for r in usage["rows"])
