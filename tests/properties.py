"""Shared strategies and checks for the input property tests: whatever people type (topics,
option strings) at the terminal, in Discord or in Slack, either a debate starts with a cleaned topic
or one line refuses it; nothing raises."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from core.sanitize import has_visible_text

RUNS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# topics: any text, and text made of what people and attackers actually send
NASTY = st.sampled_from(
    ["\x1b]0;x\x07", "\x1b[2J", "\u200b", "\u2060", "\ufeff", "\u3164", "[/]", "[link=https://x]y[/link]",
     "**", "`", "@everyone", "<@123>", "<!channel>", "\r\n", "\t", "\x00", "\x9b", "é", "🚗", "=", '"', "“"]
)  # fmt: skip
TOPICS = st.one_of(
    st.text(max_size=400), st.lists(st.one_of(NASTY, st.text(max_size=8)), max_size=40).map("".join)
)
NUMBERS = st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.text(alphabet="0123456789", min_size=1, max_size=5000),
    st.text(max_size=12),
)
KEYS = st.sampled_from(
    ["format", "rounds", "duration", "humans", "exchanges_per_round", "first_speaker", "x"]
)
VALUES = st.one_of(NUMBERS, st.sampled_from(["arena", "oxford", "council", "panel", "vote", "off", "5m"]))


def _clean(topic: str, limit: int) -> None:
    """What an accepted topic looks like."""
    assert topic == topic.strip() and has_visible_text(topic) and len(topic) <= limit
    assert not any((ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in topic)


def _one_line(text: str) -> None:
    assert text.strip() and "\n" not in text.strip() and "Traceback" not in text, text
