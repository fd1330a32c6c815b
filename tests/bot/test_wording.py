"""What the terminal says reads as English: plurals, the motion quoted in a question, ties as ties."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.cli import main
from core.words import plural, quoted
from tests.core.test_council import PROPOSALS, ballot
from tests.helpers import write_script


@pytest.fixture(autouse=True)
def _temp_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROSTRA_STORAGE__URL", f"sqlite:///{tmp_path / 'rostra.db'}")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(["demo", *args, "--fast", "--seed", "7"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return " ".join(out.out.split())  # Rich wraps long lines; the words are what matter


def test_plural_rules() -> None:
    assert [plural(n, "round") for n in (0, 1, 2)] == ["0 rounds", "1 round", "2 rounds"]
    assert plural(1, "speaker switch") == "1 speaker switch" and plural(3, "switch") == "3 switches"
    assert plural(1_200, "word") == "1,200 words"
    assert quoted("  Should cities\nban cars? ") == "“Should cities ban cars?”"


def test_one_round_is_one_round(capsys: pytest.CaptureFixture[str]) -> None:
    text = run(capsys, "Should cities ban cars?", "--rounds", "1", "--exchanges", "1")
    assert "1 round · 3 turns" in text
    assert not re.search(r"\b1 (rounds|turns|switches|votes|AI votes)\b", text)


def test_the_oxford_moderator_quotes_the_motion(capsys: pytest.CaptureFixture[str]) -> None:
    text = run(capsys, "Should cities ban cars?", "--format", "oxford", "--rounds", "1")
    assert (
        "Sharper question, on “Should cities ban cars?”: what evidence would settle it within a year?" in text
    )
    assert "On “Should cities ban cars?”: who gains, who pays" in text
    assert "settle should" not in text


SAME = {pid: [text] for pid, text in PROPOSALS.items()}  # one revision round, nothing changed


def test_a_council_tie_is_called_a_tie(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path, ballot({"ada": "p4", "dario": "p2", "esme": "p2", "kit": "p4"}, SAME))
    question = "How should our city cut car traffic downtown?"
    text = run(capsys, question, "--format", "council", "--rounds", "1", "--script", str(script))
    assert "on a tie (2 of 4 votes each), the earliest proposal taken" in text
    assert "by majority (2 of 4" not in text


def test_a_council_majority_is_still_a_majority(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path, ballot({"ada": "p4", "dario": "p4", "esme": "p2", "kit": "p4"}, SAME))
    question = "How should our city cut car traffic downtown?"
    text = run(capsys, question, "--format", "council", "--rounds", "1", "--script", str(script))
    rule = "a tie goes to the earliest proposal"  # the opening card's word on the council's rule
    assert "by majority (3 of 4 votes)" in text and "tie" not in text.lower().replace(rule, "").replace(
        "tied", ""
    )
