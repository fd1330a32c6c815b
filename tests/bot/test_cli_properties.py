"""Property: the CLI starts a debate with a cleaned topic or refuses in one line; nothing raises."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bot.cli as cli
from tests.properties import RUNS, TOPICS, VALUES, _clean, _one_line

# --- the terminal ----------------------------------------------------------------------------------


def test_the_cli_starts_a_clean_topic_or_refuses_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROSTRA_STORAGE__URL", f"sqlite:///{tmp_path / 'rostra.db'}")
    started: list[Any] = []

    async def run_demo(runtime: Any, spec: Any, *args: Any) -> int:  # the checks passed: it would run
        started.append(spec)
        return 0

    monkeypatch.setattr(cli, "_run_demo", run_demo)
    flags = st.lists(
        st.tuples(st.sampled_from(["--format", "--duration", "--exchanges", "--rounds", "--seed"]), VALUES),
        max_size=3,
    )

    @RUNS
    @given(topic=TOPICS, options=flags)
    def check(topic: str, options: list[tuple[str, str]]) -> None:
        argv = ["demo", topic, "--fast", *(w for pair in options for w in pair)]
        started.clear()
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = cli.main(argv)
            except SystemExit as exc:  # argparse refuses a malformed command line itself
                code = int(exc.code or 0)
        if started:
            assert code == 0
            _clean(started[0].topic, 300)
        else:
            assert code == 2, err.getvalue()
            _one_line(err.getvalue())

    check()
