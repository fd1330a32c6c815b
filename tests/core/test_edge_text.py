"""What comes in from outside is made storable at the edge: scripts, model text."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ModelConfigError
from core.llm.scripted import Script
from tests.core.runs import run_debate


@pytest.mark.parametrize("delay", [float("inf"), float("nan"), -1, "soon", True])
def test_a_script_delay_that_cannot_be_waited_out_is_refused_in_one_line(delay: object) -> None:
    with pytest.raises(ModelConfigError, match="delay") as refused:
        Script.parse({"proposition": [{"say": "hi", "delay": delay}]}, source="s.yaml")
    assert "\n" not in str(refused.value)


def test_the_cli_refuses_an_infinite_delay_before_anything_is_stored(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.helpers import REPO

    script = tmp_path / "s.yaml"
    script.write_text("proposition:\n  - {say: hi, delay: .inf}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env["ROSTRA_STORAGE__URL"] = f"sqlite:///{tmp_path / 'r.db'}"
    run = [sys.executable, "-m", "bot"]
    out = subprocess.run(
        [*run, "demo", "x", "--fast", "--script", str(script)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "delay" in out.stderr and "Traceback" not in out.stderr
    listing = subprocess.run([*run, "debates"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and "Traceback" not in listing.stderr


async def test_a_lone_surrogate_from_the_model_is_replaced_and_the_debate_completes(tmp_path: Path) -> None:
    script = {"proposition": ["broken \ud800 text"], "persona:vera:opposition": ["fine"]}
    run = await run_debate(tmp_path, script=script, options={"rounds": 1})
    assert run.result.reason != "failed"
    spoken = [t.text for t in run.turns("proposition")]
    assert spoken and all(text == "broken \ufffd text" for text in spoken)
