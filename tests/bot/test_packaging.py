"""What a new user meets first: the README's commands, the package's metadata, `--version`, `init`."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bot.config import load_config
from bot.init_cmd import ENV_TEMPLATE, write_starter_files
from tests.helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def rostra(cwd: Path, *args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(ROSTRA_STORAGE__URL=f"sqlite:///{db}", COLUMNS="120", AGNO_TELEMETRY="false")
    env["PYTHONPATH"] = str(REPO)  # the source tree, run from another folder
    run = [sys.executable, "-m", "bot", *args]
    return subprocess.run(run, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def readme_commands() -> list[str]:
    block = README[README.index("## Try it") :].split("```sh\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()


def test_the_readme_install_needs_only_a_python3_of_3_11_or_newer() -> None:
    first, second = readme_commands()
    assert "python3.11" not in first and first.startswith("python3 -c ")
    check = re.match(r"python3 -c '([^']+)'", first)
    assert check is not None
    ok = subprocess.run([sys.executable, "-c", check.group(1)], capture_output=True, text=True, check=False)
    assert ok.returncode == 0
    old = check.group(1).replace("sys.version_info >= (3, 11)", "(3, 10) >= (3, 11)")
    refused = subprocess.run([sys.executable, "-c", old], capture_output=True, text=True, check=False)
    assert refused.returncode == 1 and refused.stderr.startswith(
        "Rostra needs Python 3.11 or newer; python3 is "
    )
    assert second == ".venv/bin/python -m pytest"


def test_ci_runs_the_readme_install_then_its_test_command() -> None:
    first, second = readme_commands()
    install = first.split(" && .venv/bin/rostra demo")[0].split(" && ")
    ci = [
        line
        for line in (REPO / ".ci/run").read_text(encoding="utf-8").splitlines()
        if line.startswith((".venv", "python3"))
    ]
    assert ci == [*install, second]


def test_the_package_says_what_it_is() -> None:
    project = PYPROJECT["project"]
    assert project["requires-python"] == ">=3.11" and project["license"] == {"text": "MIT"}
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert project["authors"] and "License :: OSI Approved :: MIT License" in project["classifiers"]
    versions = {c.rsplit(" ", 1)[1] for c in project["classifiers"] if re.fullmatch(r".*:: 3\.\d+", c)}
    assert versions == {"3.11", "3.12", "3.13"}


def test_version(tmp_path: Path) -> None:
    out = rostra(tmp_path, "--version", db=tmp_path / "r.db")
    assert out.returncode == 0
    assert re.fullmatch(r"rostra \S+ \(Python 3\.\d+\.\d+\S*\)\n", out.stdout), out.stdout


def test_env_example_is_what_init_writes() -> None:
    assert (REPO / ".env.example").read_text(encoding="utf-8") == ENV_TEMPLATE


def test_init_writes_an_editable_config_and_a_private_env(tmp_path: Path) -> None:
    folder = tmp_path / "my rostra"
    out = rostra(tmp_path, "init", str(folder), db=tmp_path / "r.db")
    assert out.returncode == 0, out.stderr
    assert f"wrote {folder / 'config.yaml'}" in out.stdout and "ROSTRA_CONFIG=" in out.stdout
    assert (folder / "config.yaml").read_text(encoding="utf-8") == (REPO / "config.yaml").read_text(
        encoding="utf-8"
    )
    assert stat.S_IMODE((folder / ".env").stat().st_mode) == 0o600
    assert load_config(folder / "config.yaml").formats.arena.duration == 300

    (folder / "config.yaml").write_text("edited", encoding="utf-8")
    again = rostra(tmp_path, "init", str(folder), db=tmp_path / "r.db")
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr == f"rostra: {folder} already has config.yaml and .env; add --force to overwrite\n"
    assert (folder / "config.yaml").read_text(encoding="utf-8") == "edited"
    forced = rostra(tmp_path, "init", str(folder), "--force", db=tmp_path / "r.db")
    assert forced.returncode == 0 and (folder / "config.yaml").read_text(encoding="utf-8") != "edited"


def test_a_demo_run_from_the_init_folder_reads_its_config(tmp_path: Path) -> None:
    folder = tmp_path / "here"
    write_starter_files(folder)
    text = (folder / "config.yaml").read_text(encoding="utf-8")
    (folder / "config.yaml").write_text(text.replace("duration: 300 ", "duration: 90  "), encoding="utf-8")
    out = rostra(folder, "demo", "Tabs or spaces?", "--fast", db=tmp_path / "r.db")
    assert out.returncode == 0, out.stderr
    assert "1:30 of debate" in out.stdout


def test_init_refuses_a_file_as_folder(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(Exception, match="is not a folder"):
        write_starter_files(tmp_path / "f")
