"""Benchmarks, run by hand: `.venv/bin/python bench/pictures.py`. Results go in docs/benchmarks.md.

How long the closing card waits for its results picture, and how long the shared page takes, for
long debates of each format (scripted model, fake clock, real SQLite): the arena at 100 turns, the
other formats at the longest their options allow. Also the first draw in a fresh process, which
pays for loading matplotlib.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.pictures.data import picture_of
from adapters.pictures.draw import to_svg
from adapters.pictures.page import debate_page
from adapters.pictures.render import results_png
from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.documents import Document
from core.events import Event, TurnCompleted
from core.ports import DebateRecord
from core.spec import DebateSpec
from tests.helpers import REPO, RecordingSink, make_config, write_script

RUNS = 7
SCRIPT = {"judge": [{"decision": "continue", "winner": None, "reasoning": "Another round, please."}]}
DOCS = [
    Document(name=f"doc{i}.md", text=f"Document {i}: trams, shops, parks and the ring road, item {i}.\n")
    for i in range(6)
]
SPECS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # format: (options, config overrides)
    "arena": ({"rounds": 50, "exchanges_per_round": 1, "duration": 7200, "humans": "off"}, {}),
    "oxford": ({"rounds": 10, "humans": "off"}, {}),  # the judge lets every round be played (SCRIPT)
    "council": (
        {"rounds": 5, "humans": "off"},
        {
            "formats": {
                "council": {
                    "agents": [{"persona": p} for p in ("ada", "basil", "celeste", "dario", "esme", "kit")]
                }
            }
        },
    ),
    "panel": (
        {"documents": DOCS, "rounds": 5},
        {"formats": {"panel": {"agents": ["ada", "basil", "celeste", "dario", "esme", "kit"]}}},
    ),
}


async def debate(tmp: Path, fmt: str) -> tuple[DebateRecord | None, list[Event]]:
    options, overrides = SPECS[fmt]
    formats = make_config(tmp).model_dump()["formats"]
    for name, section in overrides.get("formats", {}).items():
        formats[name] = {**formats[name], **section}
    config = make_config(
        tmp,
        model={"latency": 0, "script": str(write_script(tmp, SCRIPT))} if fmt == "oxford" else {"latency": 0},
        limits={"max_rounds": 200, "max_tokens_per_debate": 0},
        formats=formats,
    )
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(
            DebateSpec(fmt, "Should cities ban cars?", options), RecordingSink(), seed=3
        )
        await handle.wait()
        return await rt.store.get_debate(handle.debate_id), await rt.store.events(handle.debate_id)


def timed(action: Any, runs: int = RUNS) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


async def closing_delay(events: list[Event], runs: int = RUNS) -> tuple[float, float, int]:
    """How long `results_png` keeps the closing card waiting: median and worst, and the PNG's size."""
    times, size = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        drawn = await results_png(events)
        times.append(time.perf_counter() - start)
        assert drawn is not None
        size = len(drawn.png)
    return statistics.median(times), max(times), size


def cold_first_draw() -> float:
    """A fresh process: import, read nothing, draw one picture (matplotlib loads on first use)."""
    code = (
        "import asyncio, time\n"
        "from core.events import DebateStarted\n"
        "from core.models import CastMember, PersonaRef\n"
        "from adapters.pictures.render import results_png\n"
        "cast = (CastMember(persona=PersonaRef(id='a', name='Ada Quill', emoji='x'), role='panellist'),)\n"
        "events = [DebateStarted(debate_id='d', format='panel', topic='Cold start?', cast=cast)]\n"
        "start = time.perf_counter()\n"
        "assert asyncio.run(results_png(events)) is not None\n"
        "print(time.perf_counter() - start)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


async def main() -> None:
    print(f"first draw in a fresh process (loads matplotlib): {cold_first_draw():.2f} s")
    print()
    header = (
        "| format | turns | events | data | PNG (closing card) | worst | PNG size | SVG | page | page size |"
    )
    print(header)
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in SPECS:
            folder = Path(tmp) / fmt
            folder.mkdir()
            record, events = await debate(folder, fmt)
            turns = sum(isinstance(e, TurnCompleted) for e in events)
            data, picture = timed(lambda events=events: picture_of(events))
            png, worst, png_size = await closing_delay(events)
            svg, _ = timed(lambda picture=picture: to_svg(picture))
            page, html = timed(lambda record=record, events=events: debate_page(record, events))
            print(
                f"| {fmt} | {turns} | {len(events)} | {data * 1000:.1f} ms | {png * 1000:.0f} ms"
                f" | {worst * 1000:.0f} ms | {png_size / 1024:.0f} KB | {svg * 1000:.0f} ms"
                f" | {page * 1000:.0f} ms | {len(html.encode()) / 1024:.0f} KB |"
            )


if __name__ == "__main__":
    asyncio.run(main())
