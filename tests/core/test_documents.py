"""Loading attached documents (what is accepted, what is refused and how) and checking quotes."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from core.documents import Document, check_quotes, extract_quotes, load_document, read_document
from core.errors import SpecError
from core.models import QuoteCheck

LIMIT = 40_000

REPORT = """# Aldmoor transport review

The Aldmoor tram carried 41 million riders in 2023 — twice the 2015 figure.
Cycling *grew fastest* in the eastern districts, where   new lanes opened in 2021.
"""


def load_file(path: Path, limit: int = LIMIT) -> Document:
    return load_document(path.name, path.read_bytes(), limit=limit)


@pytest.mark.parametrize(
    "name", ["notes.txt", "notes.md", "NOTES.MD", "notes.markdown", "notes.text", "notes"]
)
def test_text_and_markdown_files_are_accepted(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(REPORT, encoding="utf-8")
    document = load_file(path)
    assert document == Document(name=name, text=REPORT)


def test_windows_line_endings_and_byte_order_marks_are_normalised(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(codecs.BOM_UTF8 + b"one\r\ntwo\r\n")
    assert load_file(path).text == "one\ntwo\n"
    utf16 = tmp_path / "wide.txt"
    utf16.write_bytes("trams and buses\n".encode("utf-16"))
    assert load_file(utf16).text == "trams and buses\n"


def test_other_file_types_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(b"%PDF-1.7 ...")
    with pytest.raises(SpecError) as refused:
        load_file(path)
    assert str(refused.value) == "report.pdf is not a text or Markdown file: attach .txt or .md"


def test_binary_content_is_refused_whatever_the_name(tmp_path: Path) -> None:
    path = tmp_path / "diagram"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(SpecError) as refused:
        load_file(path)
    assert str(refused.value) == (
        "diagram is not a text or Markdown file (it holds binary data): attach .txt or .md"
    )


def test_text_in_another_encoding_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes("Café in Zürich".encode("latin-1"))
    with pytest.raises(SpecError) as refused:
        load_file(path)
    assert str(refused.value) == "notes.txt is not UTF-8 text: save it as UTF-8 and try again."


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("  \n\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"^notes\.md is empty\.$"):
        load_file(path)


def test_a_document_over_the_limit_is_refused_with_its_size_and_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("é" * 52_310, encoding="utf-8")  # two bytes each: the count is in characters
    with pytest.raises(SpecError) as refused:
        load_file(path)
    assert str(refused.value) == "notes.md is 52,310 characters; the limit is 40,000."
    exactly = tmp_path / "exact.md"
    exactly.write_text("é" * LIMIT, encoding="utf-8")
    assert len(load_file(exactly).text) == LIMIT


def test_a_huge_file_is_refused_without_decoding_it(tmp_path: Path) -> None:
    path = tmp_path / "dump.txt"
    path.write_bytes(b"a" * 2_000_000)
    with pytest.raises(SpecError) as refused:
        read_document(path, limit=LIMIT)
    assert str(refused.value) == "dump.txt is 2.0 MB; the limit is 40,000 characters."


def test_reading_a_path_that_is_not_there_says_so(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"^The document .*missing\.md does not exist\.$"):
        read_document(tmp_path / "missing.md", limit=LIMIT)
    path = tmp_path / "climate.md"
    path.write_text(REPORT, encoding="utf-8")
    assert read_document(path, limit=LIMIT) == Document(name="climate.md", text=REPORT)


# --- quotes ----------------------------------------------------------------------------------------


def test_curly_and_straight_quotes_are_found_and_short_ones_ignored() -> None:
    answer = (
        "The review is blunt: “the Aldmoor tram carried 41 million riders”. It calls cycling "
        '"grew fastest in the eastern districts" and uses the word "boom" once, "a modest success" too.'
    )
    assert extract_quotes(answer) == [
        "the Aldmoor tram carried 41 million riders",
        "grew fastest in the eastern districts",
    ]


def test_quotes_match_despite_case_spacing_dashes_and_markdown() -> None:
    answer = (
        "It says “The Aldmoor tram carried 41 million riders in 2023 - twice the 2015 figure.” and "
        '"cycling grew fastest in the eastern districts, where new lanes opened".'
    )
    assert check_quotes(answer, REPORT) == (
        QuoteCheck(
            text="The Aldmoor tram carried 41 million riders in 2023 - twice the 2015 figure.", verified=True
        ),
        QuoteCheck(
            text="cycling grew fastest in the eastern districts, where new lanes opened", verified=True
        ),
    )


def test_an_invented_or_altered_quote_is_not_verified() -> None:
    answer = (
        "“The Aldmoor tram carried 52 million riders in 2023.” "
        "“Buses were scrapped across the eastern districts.”"
    )
    assert [q.verified for q in check_quotes(answer, REPORT)] == [False, False]


def test_an_ellipsis_joins_parts_that_appear_in_order() -> None:
    in_order = "“The Aldmoor tram carried … twice the 2015 figure”"
    reversed_parts = "“twice the 2015 figure … The Aldmoor tram carried”"
    assert check_quotes(in_order, REPORT)[0].verified
    assert not check_quotes(reversed_parts, REPORT)[0].verified


def test_quoting_another_speaker_back_is_not_counted_as_a_document_quote() -> None:
    rhea = "Trams are “the backbone of every thriving city centre” in my reading."
    answer = (
        "Rhea calls trams “the backbone of every thriving city centre”, but my review only says "
        "“the Aldmoor tram carried 41 million riders”."
    )
    assert check_quotes(answer, REPORT, skip_found_in=[rhea]) == (
        QuoteCheck(text="the Aldmoor tram carried 41 million riders", verified=True),
    )
    assert len(check_quotes(answer, REPORT)) == 2
