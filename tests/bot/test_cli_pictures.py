"""The results picture and the shared page from the command line: real processes, a temp database."""

from __future__ import annotations

import re
from pathlib import Path

from tests.bot.test_cli import rostra

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_the_demo_writes_its_picture_and_shows_a_chart_in_the_closing_table(tmp_path: Path) -> None:
    chart = tmp_path / "results.png"
    out = rostra(tmp_path, "demo", "Should cities ban cars?", "--fast", "--seed", "7", "--chart", str(chart))
    assert out.returncode == 0, out.stderr
    assert chart.read_bytes().startswith(PNG_MAGIC)
    text = out.stdout
    closing = text[text.index("Statistics") :]
    assert "Who held the floor" in closing and "floor " in closing and "vote r1" in closing
    assert re.search(r"vote r1 +█+ \d–\d (kept|replaced)", closing)
    assert closing.index("Who held the floor") < closing.index("Ended: ")
    assert f"Results picture: {chart}" in text


def test_pictures_off_in_config_leave_the_closing_table_as_it_was(tmp_path: Path) -> None:
    out = rostra(tmp_path, "demo", "Q?", "--fast", env={"ROSTRA_RESULTS__PICTURE": "false"})
    assert out.returncode == 0, out.stderr
    assert "Statistics" in out.stdout and "Who held the floor" not in out.stdout


def test_a_chart_path_in_a_missing_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    out = rostra(tmp_path, "demo", "Q?", "--fast", "--chart", str(tmp_path / "nope" / "x.png"))
    assert out.returncode == 2
    assert out.stderr.strip() == f"rostra: --chart: the folder {tmp_path / 'nope'} does not exist"


def test_the_transcript_as_one_html_page_to_a_file_or_stdout(tmp_path: Path) -> None:
    out = rostra(tmp_path, "demo", "Tabs <or> spaces?", "--fast", "--format", "council")
    assert out.returncode == 0, out.stderr
    debate_id = re.search(r"Saved as debate (\w+)", out.stdout).group(1)  # type: ignore[union-attr]
    page = tmp_path / "debate.html"
    written = rostra(tmp_path, "transcript", debate_id, "--html", "--out", str(page))
    assert written.returncode == 0, written.stderr
    assert written.stdout == ""
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html
    assert "<title>Tabs &lt;or&gt; spaces? · Rostra</title>" in html
    printed = rostra(tmp_path, "transcript", debate_id, "--html")
    assert printed.stdout == html
    refused = rostra(tmp_path, "transcript", debate_id, "--html", "--out", str(tmp_path / "no" / "x.html"))
    assert refused.returncode == 2 and refused.stderr.startswith("rostra: --out: cannot write")
