"""Text from outside, refused with one line and no traceback: a topic argument that is not UTF-8
(real `rostra` processes given the raw bytes), a `ROSTRA_*` variable whose JSON is malformed, and a
`logging.level` that is not a level."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import ConfigError, load_config
from tests.helpers import CONFIG_PATH, REPO


def rostra(tmp_path: Path, *args: str | bytes, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "DISCORD_", "SLACK_"))}
    clean.pop("ANTHROPIC_API_KEY", None)
    clean.update(
        ROSTRA_CONFIG=str(CONFIG_PATH), ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}", **env
    )
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=REPO,
        env=clean,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            (b"demo", b"Ban cars\xff?", b"--fast"),
            "argument topic: must be UTF-8 text (byte 0xff at character 9)",
        ),
        ((b"transcript", b"\xfe\xed"), "argument ID: must be UTF-8 text (byte 0xfe at character 1)"),
    ],
)
def test_an_argument_that_is_not_utf8_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[bytes, ...], said: str
) -> None:
    done = rostra(tmp_path, *args)
    assert done.returncode == 2
    assert said in one_line(done)
    assert not (tmp_path / "rostra.db").exists()  # refused before anything was stored


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        (
            "ROSTRA_DISCORD__STARTER_ROLES",
            "[oops",
            "not valid JSON at character 2",
        ),
        ("ROSTRA_LIMITS", '{"max_rounds": ', "not valid JSON at character 16"),
        (
            "ROSTRA_LOGGING__LEVEL",
            "LOUD",
            "logging.level: must be one of DEBUG, INFO, WARNING, ERROR",
        ),
    ],
)
def test_a_bad_environment_variable_is_named_in_one_line(
    tmp_path: Path, variable: str, value: str, said: str
) -> None:
    token = "MTQ1NjA3NDQ0Mzk4MDgwMDAwMA.GhXyZw.not-a-real-secret"
    done = rostra(tmp_path, "discord", **{variable: value, "DISCORD_TOKEN": token})
    assert done.returncode == 2
    line = one_line(done)
    assert line.startswith(f"rostra: environment variable {variable}: {said}")


def test_a_logging_level_in_the_file_that_is_not_a_level_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"logging\.level: must be one of DEBUG, INFO, WARNING, ERROR"):
        load_config(CONFIG_PATH, overrides={"logging": {"level": "verbose"}})
    assert load_config(CONFIG_PATH, overrides={"logging": {"level": "debug"}}).logging.level == "DEBUG"
