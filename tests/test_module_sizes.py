"""Modules stay small enough to read in one sitting: none in core/ or adapters/ over 400 lines, and
the Discord front end within 4,000 lines; docs/architecture.md says where Slack stands, in figures
kept within `DRIFT` lines of the code's."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import REPO

MODULE_LIMIT = 400
ADAPTER_LIMIT = 4_000
DRIFT = 150


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


def _adapter_lines(name: str) -> int:
    return sum(_lines(p) for p in (REPO / "adapters" / name).rglob("*.py"))


def test_the_discord_front_end_stays_within_its_size() -> None:
    total = _adapter_lines("discord")
    assert total <= ADAPTER_LIMIT, total


def test_the_architecture_doc_gives_both_front_ends_sizes_as_they_are() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    said = re.search(r"about ([\d,]+) lines to Discord's ([\d,]+)\)", " ".join(text.split()))
    assert said is not None, "docs/architecture.md no longer says the adapters' sizes"
    slack, discord = (int(n.replace(",", "")) for n in said.groups())
    assert abs(slack - _adapter_lines("slack")) <= DRIFT, (slack, _adapter_lines("slack"))
    assert abs(discord - _adapter_lines("discord")) <= DRIFT, (discord, _adapter_lines("discord"))
