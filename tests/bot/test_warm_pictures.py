"""The bots load the drawing library before they serve, so the first closing card does not wait
for it; with pictures off they never load it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import REPO

PROBE = (
    "import asyncio, sys\n"
    "from bot.startup import warm_pictures\n"
    "asyncio.run(warm_pictures({enabled}))\n"
    "print('matplotlib' in sys.modules)\n"
)


@pytest.mark.parametrize(("enabled", "loaded"), [(True, "True"), (False, "False")])
def test_the_drawing_library_is_loaded_at_start_up_only_when_pictures_are_on(
    enabled: bool, loaded: str
) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(enabled=enabled)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == loaded
