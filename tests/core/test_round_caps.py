"""A configured default above `limits.max_rounds` is capped; a request above it is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import SpecError
from core.events import DebateStarted
from tests.core.runs import run_debate


async def test_council_caps_its_configured_rounds_at_the_limit(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path,
        fmt="council",
        topic="How should our city cut car traffic downtown?",
        options={"humans": "off"},
        formats={"council": {"rounds": 3}},
        limits={"max_rounds": 1},
        model={"latency": 0},
    )
    [started] = run.of(DebateStarted)
    assert started.settings["rounds"] == 1
    assert {t.round for t in run.turns()} == {0, 1}  # the proposals, then one revision round
    assert run.result.reason == "completed"
    assert run.result.detail == "the council voted after 1 revision round"


async def test_council_refuses_a_request_above_the_limit_as_oxford_does(tmp_path: Path) -> None:
    for fmt in ("council", "oxford"):
        with pytest.raises(SpecError, match=r"rounds must be at most 1 \(the configured cap; got 2\)"):
            await run_debate(tmp_path, fmt=fmt, options={"rounds": 2}, limits={"max_rounds": 1})
