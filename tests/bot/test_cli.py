"""`rostra` as a person runs it: real processes, a temp database, no key, no network."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from tests.helpers import REPO, write_script


def rostra(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"
    }
    full_env.update(
        ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}",
        COLUMNS="120",
        AGNO_TELEMETRY="false",
        **(env or {}),
    )
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_fast_demo_runs_offline_to_a_summary(tmp_path: Path) -> None:
    out = rostra(tmp_path, "demo", "Should cities ban cars?", "--fast", "--seed", "7")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "offline scripted rehearsal" in text
    speakers = set(
        re.findall(
            r"^\S+ (\w+ \w+)  (?:Round \d+ · (?:for|against) the motion|Closing summary)$", text, re.MULTILINE
        )
    )
    assert len(speakers) >= 3, speakers
    assert "🗳  Should" in text and "Vote v1" in text  # a vote card with its result
    assert "Statistics" in text and "Ended: " in text
    assert "Saved as debate" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["demo", ""], "The topic is empty"),
        (["demo", "x" * 301], "The topic is 301 characters long; the limit is 300."),
        (["demo", "Tabs?", "--format", "shouting"], "Unknown format 'shouting'"),
        (["demo", "Tabs?", "--model", "gpt-9"], "Unknown model 'gpt-9'"),
        (["demo", "Tabs?", "--model", "madeup:model-1"], "Unknown model provider 'madeup'"),
        (["demo", "Tabs?", "--model", "anthropic:claude-sonnet-4-5"], "needs ANTHROPIC_API_KEY"),
        (["demo", "Tabs?", "--duration", "ten"], "--duration must be a whole number"),
        (["demo", "Tabs?", "--exchanges", "0"], "--exchanges must be between 1 and 10"),
        (["demo", "Tabs?", "--script", "/no/such/script.yaml"], "Script file not found"),
        (["transcript", "nope1234"], "No debate with ID 'nope1234'"),
    ],
)
def test_bad_input_prints_one_clear_line_and_exits_2(
    tmp_path: Path,
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROSTRA_STORAGE__URL", f"sqlite:///{tmp_path / 'rostra.db'}")
    with pytest.raises(SystemExit) as exited:
        raise SystemExit(main(args))
    out = capsys.readouterr()
    assert exited.value.code == 2
    assert out.out == ""
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rostra: ") and message in lines[0], out.err


def test_the_whole_process_exits_2_on_bad_input(tmp_path: Path) -> None:
    out = rostra(tmp_path, "demo", "   ")
    assert out.returncode == 2 and out.stderr.startswith("rostra: The topic is empty")


def test_all_observers_voting_replace_shows_a_switch_in_the_transcript(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"observer": [{"vote": "replace", "reason": "Fresh voice needed."}]})
    out = rostra(tmp_path, "demo", "Tabs or spaces?", "--fast", "--script", str(script), "--exchanges", "1")
    assert out.returncode == 0, out.stderr
    debate_id = re.search(r"Saved as debate (\w+)", out.stdout).group(1)  # type: ignore[union-attr]
    md = rostra(tmp_path, "transcript", debate_id)
    assert md.returncode == 0
    assert "**Switch:**" in md.stdout
    first, new = re.search(r"\*\*Switch:\*\* \S+ (\w+ \w+) → \S+ (\w+ \w+)", md.stdout).groups()  # type: ignore[union-attr]
    assert first != new
    assert re.search(rf"## Round 2 · for the motion: \S+ {new}", md.stdout)
    jsonl = rostra(tmp_path, "transcript", debate_id, "--json")
    assert '"kind":"speaker_switched"' in jsonl.stdout


def test_debates_and_personas_list_what_is_there(tmp_path: Path) -> None:
    assert "No debates yet" in rostra(tmp_path, "debates").stdout
    rostra(tmp_path, "demo", "Tabs or spaces?", "--fast", "--exchanges", "1")
    listing = rostra(tmp_path, "debates")
    assert "Tabs or spaces?" in listing.stdout and "completed" in listing.stdout
    cast = rostra(tmp_path, "personas").stdout
    assert "Ada Quill" in cast and "opposition" in cast and "moderator" in cast


def test_help_lists_the_commands(tmp_path: Path) -> None:
    out = rostra(tmp_path, "--help")
    assert out.returncode == 0
    for command in ("demo", "personas", "debates", "transcript"):
        assert command in out.stdout


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("oxford", ["Opening · the focus question", "Verdict", "Ended: the judge ruled"]),
        ("council", ["Round 0 · proposal", "Council decision", "Statistics"]),
    ],
)
def test_every_format_runs_in_the_terminal(tmp_path: Path, fmt: str, expected: list[str]) -> None:
    out = rostra(tmp_path, "demo", "Should cities ban cars?", "--format", fmt, "--fast", "--seed", "3")
    assert out.returncode == 0, out.stderr
    for text in expected:
        assert text in out.stdout, text


def test_the_panel_reads_documents_and_saves_its_answers(tmp_path: Path) -> None:
    cars = tmp_path / "cars.md"
    cars.write_text(
        "# Cars\n\nRetail footfall rose by a fifth within two years of the ban.\n", encoding="utf-8"
    )
    access = tmp_path / "access.txt"
    access.write_text("Deliveries need kerb access at all hours of the day.\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "demo",
            "What happens when cities ban cars?",
            "--format",
            "panel",
            "--fast",
            "--doc",
            str(cars),
            "--doc",
            str(access),
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "ROSTRA_STORAGE__URL": f"sqlite:///{tmp_path / 'r.db'}",
            "COLUMNS": "120",
            "ROSTRA_CONFIG": str(REPO / "config.yaml"),
        },
    )
    assert out.returncode == 0, out.stderr
    assert "from cars.md" in out.stdout and "from access.txt" in out.stdout
    assert "✔ verified" in out.stdout  # rehearsal panellists quote their own documents
    [saved] = list(work.glob("panel-*.md"))
    assert saved.read_text(encoding="utf-8").startswith("# Panel: What happens when cities ban cars?")
    assert saved.stat().st_mode & 0o777 == 0o600  # the owner's only, whatever the umask


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("pdf", "report.pdf is not a text or Markdown file"),
        ("big", "big.md is 40,001 characters; the limit is 40,000."),
        ("missing", "does not exist"),
    ],
)
def test_unusable_documents_are_refused_in_one_line(
    tmp_path: Path,
    setup: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROSTRA_STORAGE__URL", f"sqlite:///{tmp_path / 'rostra.db'}")
    paths = {"pdf": tmp_path / "report.pdf", "big": tmp_path / "big.md", "missing": tmp_path / "gone.md"}
    paths["pdf"].write_bytes(b"%PDF-1.7 binary")
    paths["big"].write_text("x" * 40_001, encoding="utf-8")
    code = main(["demo", "Q?", "--format", "panel", "--fast", "--doc", str(paths[setup])])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err


def test_options_a_format_does_not_take_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["demo", "Q?", "--format", "council", "--duration", "60"])
    assert code == 2
    assert "Unknown option 'duration'" in capsys.readouterr().err


def _special(tmp_path: Path, kind: str) -> str:
    """A path that is not a readable regular file of text."""
    if kind == "fifo":
        path = tmp_path / "pipe.md"
        os.mkfifo(path)
        return str(path)
    if kind == "zero":
        return "/dev/zero"
    if kind == "folder":
        (tmp_path / "folder.md").mkdir()
        return str(tmp_path / "folder.md")
    path = tmp_path / "blob.yaml"
    path.write_bytes(bytes(range(256)) * 64)
    return str(path)


@pytest.mark.parametrize("kind", ["fifo", "zero", "folder", "binary"])
@pytest.mark.parametrize("flag", ["--doc", "--question-doc", "--script", "--config"])
def test_files_that_are_not_regular_text_are_refused_in_one_line(
    tmp_path: Path,
    kind: str,
    flag: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROSTRA_STORAGE__URL", f"sqlite:///{tmp_path / 'rostra.db'}")
    path = _special(tmp_path, kind)
    args = ["demo", "Q?", "--fast"]
    if flag in ("--doc", "--question-doc"):
        args += ["--format", "panel"]
    code = main(["--config", path, *args] if flag == "--config" else [*args, flag, path])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "Traceback" not in err[0]


def test_invalid_script_yaml_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("proposition: [one, two\nopposition: x\n", encoding="utf-8")
    code = main(["demo", "Q?", "--fast", "--script", str(script)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "is not valid YAML" in err[0] and "line" in err[0]


def test_a_bot_with_a_fifo_script_fails_at_start_up_in_one_line(tmp_path: Path) -> None:
    from bot.config import ConfigError
    from tests.helpers import make_config

    fifo = tmp_path / "script.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=r"model.script: The script file .* is a pipe \(FIFO\)"):
        make_config(tmp_path, model={"script": str(fifo)})


@pytest.mark.slow
def test_stored_text_is_never_markup_and_never_drives_the_terminal(tmp_path: Path) -> None:
    topic = "Is [/] fine? [link=https://evil.example]click[/link] [bold]now"
    script = write_script(tmp_path, {"proposition": ["Yes.\x1b]0;owned\x07\x1b[2J Really."]})
    out = rostra(tmp_path, "demo", topic, "--fast", "--script", str(script), "--exchanges", "1")
    assert out.returncode == 0, out.stderr
    debate_id = re.search(r"Saved as debate (\w+)", out.stdout).group(1)  # type: ignore[union-attr]
    listing = rostra(tmp_path, "debates")
    assert listing.returncode == 0, listing.stderr
    assert "[link=https://evil.example]" in listing.stdout and "[/]" in listing.stdout
    assert "\x1b]8;" not in listing.stdout  # no terminal hyperlink
    md = rostra(tmp_path, "transcript", debate_id)
    assert "Yes." in md.stdout and "Really." in md.stdout
    assert "\x1b" not in md.stdout and "\x07" not in md.stdout


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_api_key_runs_the_offline_rehearsal(tmp_path: Path, blank: str) -> None:
    out = rostra(tmp_path, "demo", "Tabs?", "--fast", "--exchanges", "1", env={"ANTHROPIC_API_KEY": blank})
    assert out.returncode == 0, out.stderr
    assert "offline scripted rehearsal" in out.stdout
