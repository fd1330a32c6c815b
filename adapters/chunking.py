"""Splitting long text into messages, for both front ends (Discord Markdown and Slack mrkdwn fence
code alike): at paragraph or sentence boundaries, never inside a code block (a block longer than
one message is closed and reopened around the cut), never inside an HTML entity (Slack's `&amp;`).

Each cut depends only on the text up to it, so while a turn streams in, every message except the
last keeps its text: earlier messages never need rewriting as the turn grows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

FENCE = "```"
_CLOSE = "\n" + FENCE
_SENTENCE_END = re.compile(r"[.!?…][)\]\"'”’»]*(?=\s)")


@dataclass(frozen=True)
class _Span:
    """A code block: from its opening fence to the end of its closing fence (or the text)."""

    start: int
    end: int

    def holds(self, position: int) -> bool:
        return self.start < position < self.end


def _code_spans(text: str) -> list[_Span]:
    fences = [m.start() for m in re.finditer(re.escape(FENCE), text)]
    spans = [_Span(fences[i], fences[i + 1] + len(FENCE)) for i in range(0, len(fences) - 1, 2)]
    if len(fences) % 2:
        spans.append(_Span(fences[-1], len(text)))
    return spans


def _boundaries(text: str, limit: int) -> Iterator[list[int]]:
    """Candidate cut positions, best kind first: paragraphs, lines, sentences, words."""
    window = text[: limit + 1]
    yield [m.start() for m in re.finditer(r"\n\s*\n", window)]
    yield [m.start() for m in re.finditer(r"\n", window)]
    yield [m.end() for m in _SENTENCE_END.finditer(window)]
    yield [m.start() for m in re.finditer(r" ", window)]


def _cut(text: str, limit: int) -> tuple[int, str | None]:
    """Where to end the first message, and the fence opener to repeat if the cut is inside code."""
    spans = _code_spans(text[: limit + 1])
    tiers = [
        [c for c in tier if 0 < c <= limit and not any(s.holds(c) for s in spans)]
        for tier in _boundaries(text, limit)
    ]
    tiers[0] += [s.start for s in spans if 0 < s.start <= limit]
    for tier in tiers:
        if tier and max(tier) >= limit // 2:
            return max(tier), None
    for tier in tiers:
        if tier:
            return max(tier), None
    span = next((s for s in spans if s.start < limit < s.end), None)
    if span is None:
        return safe_cut(text, limit), None
    opener_end = text.find("\n", span.start)
    opener = text[span.start : opener_end] if 0 <= opener_end < limit else FENCE
    room = limit - len(_CLOSE)
    newline = text.rfind("\n", span.start + len(opener) + 1, room)
    return (newline if newline > span.start else room), opener


def safe_cut(text: str, at: int) -> int:
    """Move a cut back so it does not fall inside an HTML entity."""
    amp = text.rfind("&", max(0, at - 5), at)
    if amp != -1 and ";" not in text[amp:at]:
        return amp
    return at


def split_message(text: str, limit: int) -> list[str]:
    """`text` as messages of at most `limit` characters each (empty text gives no messages)."""
    if limit < 4 * len(FENCE) + 8:
        raise ValueError(f"limit {limit} is too small: it must be at least {4 * len(FENCE) + 8} characters")
    chunks: list[str] = []
    rest = text.strip()
    while rest:
        if len(rest) <= limit:
            chunks.append(rest)
            break
        cut, opener = _cut(rest, limit)
        if opener is None:
            chunk, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        else:
            chunk, rest = rest[:cut].rstrip() + _CLOSE, opener + "\n" + rest[cut:].lstrip("\n")
        if chunk.strip():
            chunks.append(chunk)
    return chunks
