"""The results chart in the terminal's closing table, from the same picture data as the PNG."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from adapters.console.render import ConsoleView
from core.events import Event
from tests.adapters.pictures import debates


def closing(events: list[Event], *, chart: bool = True) -> str:
    console = Console(record=True, width=120, color_system=None)
    view = ConsoleView(chart=chart)
    for event in events:
        for piece in view.render(event):
            console.print(piece.renderable, end="" if piece.inline else "\n")
    text = console.export_text()
    return text[text.index("Statistics") :]


async def test_the_council_chart_shows_each_proposals_support_and_the_adopted_one(tmp_path: Path) -> None:
    run = await debates.council(tmp_path)
    text = closing(run.stored)
    assert "Support for each proposal" in text
    lines = {line.split("  ")[0]: line for line in text.splitlines() if "  " in line}
    assert lines["Dario Vance"].rstrip().endswith("3  adopted")
    assert "adopted" not in lines["Ada Quill"] and lines["Ada Quill"].rstrip().endswith("1")
    assert text.index("Support for each proposal") < text.index("Ended: ")


async def test_the_panel_chart_shows_agreement_per_pair(tmp_path: Path) -> None:
    run = await debates.panel(tmp_path)
    text = closing(run.stored)
    assert "BT·RL" in text and "100% shared words" in text
    assert "BT·KN" in text


async def test_oxford_chart_shows_the_audience_and_the_swing(tmp_path: Path) -> None:
    run = await debates.oxford(tmp_path)
    text = closing(run.stored)
    assert "before    " in text and "for 2 · against 1 · undecided 1" in text
    assert "for 1 · against 3 · undecided 0" in text and "swing: for -1, against +2" in text


async def test_with_pictures_off_the_closing_table_has_no_chart(tmp_path: Path) -> None:
    run = await debates.arena(tmp_path)
    assert "Who held the floor" in closing(run.stored)
    assert "Who held the floor" not in closing(run.stored, chart=False)
