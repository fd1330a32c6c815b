"""`rostra demo` reads the bots' configuration (config.yaml, `ROSTRA_*`), and its flags win."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO, write_script


def demo(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`rostra demo ... --fast` as a process on a pipe (nobody at a keyboard), no key, a temp database."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    full.update(ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}", COLUMNS="120", **(env or {}))
    full["AGNO_TELEMETRY"] = "false"
    run = [sys.executable, "-m", "bot", "demo", "Should cities ban cars?", "--fast", "--seed", "7", *args]
    return subprocess.run(run, cwd=REPO, env=full, capture_output=True, text=True, timeout=120, check=False)


def test_the_demo_honours_the_arena_duration_from_the_environment(tmp_path: Path) -> None:
    out = demo(tmp_path, env={"ROSTRA_FORMATS__ARENA__DURATION": "120"})
    assert out.returncode == 0, out.stderr
    assert "2:00 of debate" in out.stdout and "1:54 left" in out.stdout


def test_a_flag_overrides_the_environment(tmp_path: Path) -> None:
    out = demo(tmp_path, "--duration", "90", env={"ROSTRA_FORMATS__ARENA__DURATION": "120"})
    assert out.returncode == 0, out.stderr
    assert "1:30 of debate" in out.stdout and "2:00 of debate" not in out.stdout


def test_without_a_flag_the_duration_is_the_configured_one(tmp_path: Path) -> None:
    out = demo(tmp_path, "--rounds", "1")
    assert "5:00 of debate" in out.stdout  # formats.arena.duration in config.yaml


def tie_script(tmp_path: Path) -> Path:
    """Ada speaks first; two of her four observers keep her and two replace her: a tie."""
    keep, replace = [{"vote": "keep", "reason": "Fair."}], [{"vote": "replace", "reason": "Stale."}]
    return write_script(
        tmp_path,
        {
            "persona:basil:observer": keep,
            "persona:celeste:observer": keep,
            "persona:dario:observer": replace,
            "persona:esme:observer": replace,
        },
    )


def test_the_tie_window_comes_from_config_and_the_flag_overrides_it(tmp_path: Path) -> None:
    args = ("--script", str(tie_script(tmp_path)), "--first-speaker", "ada", "--humans", "tiebreak")
    window = {"ROSTRA_FORMATS__ARENA__HUMAN_WINDOW": "45"}
    configured = demo(tmp_path, *args, "--rounds", "2", env=window)
    assert configured.returncode == 0, configured.stderr
    assert "people have 45 s to vote" in configured.stdout
    flagged = demo(tmp_path, *args, "--rounds", "2", "--human-window", "20", env=window)
    assert "people have 20 s to vote" in flagged.stdout and "45 s" not in flagged.stdout


def test_without_a_terminal_people_do_not_vote_unless_asked(tmp_path: Path) -> None:
    out = demo(tmp_path, "--script", str(tie_script(tmp_path)), "--first-speaker", "ada", "--rounds", "2")
    assert out.returncode == 0, out.stderr
    assert "people have" not in out.stdout


def test_council_strategy_flag(tmp_path: Path) -> None:
    out = demo(tmp_path, "--format", "council", "--strategy", "weighted", "--rounds", "1")
    assert out.returncode == 0, out.stderr
    assert "Votes weighted by expertise" in out.stdout


def test_an_environment_error_names_the_variable_not_the_file(tmp_path: Path) -> None:
    out = demo(tmp_path, env={"ROSTRA_FORMATS__ARENA__DURATION": "5"})
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("rostra: environment variable ROSTRA_FORMATS__ARENA__DURATION:")
    assert "config.yaml" not in out.stderr and len(out.stderr.splitlines()) == 1


def test_a_humans_mode_the_format_does_not_offer_is_one_line(tmp_path: Path) -> None:
    out = demo(tmp_path, "--format", "council", "--humans", "vote")
    assert out.returncode == 2
    assert out.stderr == "rostra: --humans vote is not offered by council: choose off or tiebreak\n"
