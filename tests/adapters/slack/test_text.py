"""Escaping, Slack markup → plain text, and splitting long messages."""

import pytest

from adapters.chunking import split_message
from adapters.slack.render.text import escape, from_slack, model_text, truncate


def test_escape_stops_mentions_and_links() -> None:
    text = "Hey <!channel> and <@U123>, see <#C999|general> & <https://evil.example|this>"
    out = escape(text)
    assert "<" not in out
    assert ">" not in out
    assert out == (
        "Hey &lt;!channel&gt; and &lt;@U123&gt;, see &lt;#C999|general&gt; &amp; "
        "&lt;https://evil.example|this&gt;"
    )


def test_from_slack_turns_markup_into_what_the_person_typed() -> None:
    raw = "Is <@U42|dana> right that <!here> A &lt; B &amp;&amp; <#C1|general> reads <https://x.io|the post>?"
    assert from_slack(raw) == "Is @dana right that @here A < B && #general reads the post (https://x.io)?"
    assert from_slack("<@U42> <!subteam^S1|@eng> <https://x.io>") == "@U42 @eng https://x.io"


def test_model_markdown_becomes_slack_mrkdwn() -> None:
    assert model_text("## Point\n**Cars** & __trains__") == "*Point*\n*Cars* &amp; _trains_"


def test_short_text_is_one_part() -> None:
    assert split_message("Short.", 100) == ["Short."]


def test_split_prefers_paragraphs_then_sentences() -> None:
    first = "First paragraph says one thing. " * 3
    second = "Second paragraph goes on. " * 3
    parts = split_message(f"{first.strip()}\n\n{second.strip()}", 120)
    assert parts == [first.strip(), second.strip()]
    sentences = "One sentence here. Another sentence there. A third one follows. And a fourth."
    parts = split_message(sentences, 50)
    assert all(len(p) <= 50 for p in parts)
    assert all(p.endswith(".") for p in parts)
    assert " ".join(parts) == sentences


def test_split_never_leaves_a_code_block_open() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(30))
    text = f"Here is code:\n```\n{code}\n```\nDone."
    parts = split_message(text, 120)
    assert len(parts) > 1
    for part in parts:
        assert len(part) <= 120
        assert part.count("```") % 2 == 0
    joined = "\n".join(parts)
    for i in range(30):
        assert f"line_{i} = {i}" in joined


def test_split_never_cuts_an_entity() -> None:
    text = escape("&" * 200)
    for part in split_message(text, 50):
        assert part.replace("&amp;", "") == ""


def test_split_is_stable_as_text_grows() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(60))
    whole = split_message(text, 200)
    for cut in range(300, len(text), 37):
        partial = split_message(text[:cut], 200)
        assert partial[:-1] == whole[: len(partial) - 1]


def test_truncate() -> None:
    assert truncate("abcdef", 10) == "abcdef"
    assert truncate("abcdefghijkl", 6) == "abcde…"
    assert truncate("ab &amp; cd", 6) == "ab…"


def test_limit_must_leave_room() -> None:
    with pytest.raises(ValueError, match="at least"):
        split_message("x", 5)
