"""Modules stay small enough to read in one sitting: none in core/ or adapters/ over 400 lines, and
the Discord front end within 4,000 lines (docs/architecture.md says where Slack stands)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import REPO

MODULE_LIMIT = 400
ADAPTER_LIMIT = 4_000


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_in_core_or_adapters_is_over_the_limit() -> None:
    over = {
        str(p.relative_to(REPO)): n
        for folder in ("core", "adapters")
        for p in sorted((REPO / folder).rglob("*.py"))
        if (n := _lines(p)) > MODULE_LIMIT
    }
    assert over == {}, f"modules over {MODULE_LIMIT} lines: {over}"


def test_the_discord_front_end_stays_within_its_size() -> None:
    total = sum(_lines(p) for p in (REPO / "adapters" / "discord").rglob("*.py"))
    assert total <= ADAPTER_LIMIT, total
