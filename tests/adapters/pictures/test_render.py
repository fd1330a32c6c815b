"""Drawing the picture for the closing card: off the event loop, and a failure never reaches the caller."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from adapters.pictures.data import picture_of
from adapters.pictures.draw import plain, to_svg
from adapters.pictures.render import results_png
from core.events import DebateStarted
from core.models import CastMember, PersonaRef
from tests.adapters.pictures import debates

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(png: bytes) -> tuple[int, int]:
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


async def test_every_format_draws_a_png_sized_for_a_chat_preview_with_its_alt_text(tmp_path: Path) -> None:
    runs = [
        await debates.arena(tmp_path / "arena"),
        await debates.oxford(tmp_path / "oxford"),
        await debates.council(tmp_path / "council"),
        await debates.panel(tmp_path / "panel"),
    ]
    for run in runs:
        drawn = await results_png(run.stored)
        assert drawn is not None
        assert drawn.png.startswith(PNG_MAGIC)
        assert png_size(drawn.png) == (960, 540)
        assert drawn.filename == f"rostra-{run.debate_id}-results.png"
        assert drawn.alt == picture_of(run.stored).alt  # type: ignore[union-attr]
        assert drawn.title


async def test_pictures_off_draw_nothing(tmp_path: Path) -> None:
    run = await debates.arena(tmp_path)
    assert await results_png(run.stored, enabled=False) is None


async def test_a_drawing_failure_returns_none_and_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    run = await debates.arena(tmp_path)

    def broken(self: Figure, *args: object, **kwargs: object) -> None:
        raise OSError("no space left on device")

    monkeypatch.setattr(Figure, "savefig", broken)  # matplotlib itself fails, not our code
    with caplog.at_level(logging.WARNING, logger="adapters.pictures.render"):
        assert await results_png(run.stored) is None
    [record] = [r for r in caplog.records if r.name == "adapters.pictures.render"]
    assert "could not be drawn" in record.getMessage() and run.debate_id in record.getMessage()
    assert record.exc_info is not None and "no space left" in str(record.exc_info[1])


async def test_a_drawing_that_takes_too_long_is_given_up_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = await debates.arena(tmp_path)
    with caplog.at_level(logging.WARNING, logger="adapters.pictures.render"):
        assert await results_png(run.stored, within=0.0) is None
    assert any("not drawn within" in r.getMessage() for r in caplog.records)


async def test_drawing_runs_off_the_event_loop(tmp_path: Path) -> None:
    run = await debates.council(tmp_path)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.001)

    ticker = asyncio.create_task(tick())
    drawn = await results_png(run.stored)
    ticker.cancel()
    assert drawn is not None
    assert ticks > 3  # the loop kept running while the picture was drawn


def test_stored_text_never_reaches_mathtext_or_draws_missing_glyphs() -> None:
    assert plain("Costs $5 and $x^2$ 🚗 <b>") == r"Costs \$5 and \$x^2\$ <b>"
    cast = (CastMember(persona=PersonaRef(id="a", name="$A$ 🚗", emoji="🚗"), role="panellist"),)
    started = DebateStarted(debate_id="d1", format="panel", topic="$\\frac{1}{0}$ {{x}} 🚗", cast=cast)
    picture = picture_of([started])
    assert picture is not None
    svg = to_svg(picture)  # would raise on a mathtext error
    assert svg.startswith("<svg") and "<script" not in svg


async def test_a_long_arena_still_draws(tmp_path: Path) -> None:
    run = await debates.arena(tmp_path, rounds=16)
    picture = picture_of(run.stored)
    assert picture is not None and len(picture.votes) == 15  # type: ignore[union-attr]
    drawn = await results_png(run.stored)
    assert drawn is not None and drawn.png.startswith(PNG_MAGIC)
