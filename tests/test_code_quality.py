"""ruff and mypy stay clean: the test command checks them so nothing drifts between reviews."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


def test_ruff_finds_nothing() -> None:
    lint = run("ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = run("ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_is_clean() -> None:
    out = run("mypy")
    assert out.returncode == 0, out.stdout + out.stderr
