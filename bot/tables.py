"""Tables that fit any terminal (`rostra debates`, `rostra usage`), and the `--json` form for scripts.

Whatever the width (an 80-column terminal, a pipe), the columns people scan and grep keep their
whole text: every column shown is exactly as wide as its longest cell and never wraps, except the
one free-text column (the topic), which takes the squeeze and wraps. When even that does not fit,
optional columns are left out, in the order given, and a line under the table names them (a wider
terminal or `--json` shows everything).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

from core.sanitize import strip_controls

GAP = 2  # columns between cells
SQUEEZE_MIN = 16  # the squeezed column keeps at least this much before optional columns go


@dataclass(frozen=True)
class ColumnSpec:
    """A column. `squeeze`: the one that wraps; `drop`: optional, in the order they may be left out."""

    header: str
    right: bool = False
    squeeze: bool = False
    drop: int | None = None


def _width(text: str) -> int:
    return max((Text(line).cell_len for line in text.splitlines() or [""]), default=0)


def fitted_table(
    title: str,
    columns: Sequence[ColumnSpec],
    rows: Sequence[Sequence[str]],
    *,
    width: int,
    total: Sequence[str] | None = None,
) -> RenderableType:
    """A table `width` columns wide at most, with an optional total row under a rule.

    Stored text is shown as plain text, never as Rich markup, its control characters removed.
    """
    cells = [[strip_controls(c) for c in row] for row in rows]
    every = [*cells, *([list(total)] if total is not None else [])]
    natural = [
        max([_width(spec.header), *(_width(row[i]) for row in every)]) for i, spec in enumerate(columns)
    ]
    shown = list(range(len(columns)))
    droppable = sorted((spec.drop, i) for i, spec in enumerate(columns) if spec.drop is not None)

    def needed() -> int:
        fixed = sum(natural[i] for i in shown if not columns[i].squeeze)
        squeeze = sum(min(natural[i], SQUEEZE_MIN) for i in shown if columns[i].squeeze)
        return fixed + squeeze + GAP * (len(shown) - 1) + 1

    left_out: list[str] = []
    while needed() > width and droppable:
        _, i = droppable.pop(0)
        shown.remove(i)
        left_out.append(columns[i].header)

    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), show_edge=False, pad_edge=False)
    for i in shown:
        spec = columns[i]
        justify: JustifyMethod = "right" if spec.right else "left"
        if spec.squeeze:
            table.add_column(spec.header, justify=justify, ratio=1, overflow="fold")
        else:
            table.add_column(
                spec.header,
                justify=justify,
                no_wrap=True,
                min_width=natural[i],
                max_width=natural[i],
            )
    for row in cells:
        table.add_row(*(Text(row[i]) for i in shown))
    if total is not None:
        table.add_section()
        table.add_row(*(Text(strip_controls(total[i])) for i in shown))
    if not left_out:
        return table
    note = Text(
        f"Left out for width: {', '.join(left_out)} (see --json or a wider terminal).",
        style="dim",
    )
    return Group(table, note)


def to_json(value: Any) -> str:
    """Indented JSON for scripts (`--json`): one document, ending with a newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
