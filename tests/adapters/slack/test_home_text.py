"""The Home tab's lists: a topic is escaped and then cut (an `&` never makes it longer than shown, no
entity is cut in half), each text block stays within Slack's 3,000 characters, and no entry is cut
inside its link."""

from __future__ import annotations

import re

from adapters.slack.inbound.home.blocks import TOPIC_SHOWN, DebateLine, home_view

ENTITY_OR_AMP = re.compile(r"&(?!amp;|lt;|gt;)")


def line(n: int, topic: str, reason: str = "") -> DebateLine:
    return DebateLine(
        topic=topic,
        format="arena",
        status="completed",
        channel=f"C{n:04d}",
        thread_ts=f"17000000{n:02d}.000100",
        reason=reason,
    )


def texts(view: dict) -> list[str]:  # type: ignore[type-arg]
    return [b["text"]["text"] for b in view["blocks"] if b.get("type") == "section"]


def test_topics_full_of_ampersands_are_escaped_then_cut_and_fit_the_blocks() -> None:
    running = [line(n, "&" * 400, reason="x") for n in range(10)]
    recent = [line(n, "<&> " * 100 + "end", reason="R&D " * 50) for n in range(10, 20)]
    view = home_view(running, recent)
    for text in texts(view):
        assert len(text) <= 3000
        assert not ENTITY_OR_AMP.search(text), text  # every & is a whole entity
        assert text.count("<") == text.count(">")  # no link cut open
        assert not text.endswith("…") or text.count("<") == 0
    entries = [e for t in texts(view) for e in t.split("\n") if "<https://slack.com/archives/" in e]
    assert len(entries) == 20  # every debate listed, none dropped by a cut
    for entry in entries:
        label = re.search(r"\|(.*?)>\*", entry)
        assert label is not None, entry
        assert len(label.group(1)) <= TOPIC_SHOWN
