"""Splitting long text into messages (shared by both front ends): Discord's limits here; Slack's
cases (entities, its limits) are in tests/adapters/slack/test_text.py."""

from __future__ import annotations

import re

import pytest

from adapters.chunking import split_message
from adapters.discord.render.ops import MESSAGE_LIMIT


def _fences_balanced(chunk: str) -> bool:
    return chunk.count("```") % 2 == 0


def test_short_text_is_one_message() -> None:
    assert split_message("  Hello there.  ", MESSAGE_LIMIT) == ["Hello there."]
    assert split_message("", MESSAGE_LIMIT) == []


def test_paragraphs_are_kept_whole() -> None:
    paragraphs = [f"Paragraph {i}. " + "word " * 60 for i in range(12)]
    text = "\n\n".join(p.strip() for p in paragraphs)

    chunks = split_message(text, 1000)

    assert len(chunks) > 1
    assert all(len(c) <= 1000 for c in chunks)
    for chunk in chunks:  # each message starts a paragraph and ends one
        assert re.match(r"Paragraph \d+\.", chunk)
        assert chunk.endswith("word")
    assert "\n\n".join(chunks) == text


def test_without_paragraphs_it_cuts_after_a_sentence() -> None:
    text = " ".join(f"Sentence number {i} says something modest." for i in range(80))

    chunks = split_message(text, 500)

    assert all(len(c) <= 500 for c in chunks)
    assert all(c.endswith(".") for c in chunks)
    assert " ".join(chunks) == text


def test_a_code_block_is_never_cut_when_it_fits_in_a_message() -> None:
    prose = "Intro sentence here. " * 30
    code = "```python\n" + "\n".join(f"x_{i} = {i}" for i in range(40)) + "\n```"
    text = f"{prose.strip()}\n\n{code}\n\nAfter the code."

    chunks = split_message(text, 700)

    assert all(len(c) <= 700 for c in chunks)
    assert all(_fences_balanced(c) for c in chunks)
    assert any(c.startswith(code) for c in chunks)  # the block travels whole


def test_a_code_block_longer_than_a_message_is_closed_and_reopened() -> None:
    code = "```sql\n" + "\n".join(f"SELECT {i} FROM t;" for i in range(300)) + "\n```"

    chunks = split_message(f"Look:\n\n{code}", 800)

    assert len(chunks) > 3
    assert all(len(c) <= 800 for c in chunks)
    assert all(_fences_balanced(c) for c in chunks)
    assert all(c.startswith("```sql\n") for c in chunks[1:])
    body = "".join(c.removeprefix("```sql\n").removesuffix("\n```") + "\n" for c in chunks[1:])
    assert [line for line in body.splitlines() if line] == code.splitlines()[1:-1]


def test_text_without_any_boundary_is_cut_hard() -> None:
    chunks = split_message("x" * 4500, 2000)
    assert [len(c) for c in chunks] == [2000, 2000, 500]


@pytest.mark.parametrize("grow_to", [2100, 2600, 3900, 6000])
def test_earlier_messages_do_not_change_while_a_turn_streams_in(grow_to: int) -> None:
    full = " ".join(f"Point {i}: this matters because it does." for i in range(400))
    full += "\n\n```\n" + "code line\n" * 300 + "```"
    streamed = split_message(full[:grow_to], MESSAGE_LIMIT)
    final = split_message(full, MESSAGE_LIMIT)
    assert streamed[:-1] == final[: len(streamed) - 1]
