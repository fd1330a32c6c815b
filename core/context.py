"""The bounded context each prompt sees: recent turns verbatim plus a running digest of older ones.

The digest is extractive (each older turn's opening sentence, trimmed) rather than written by a
model: it costs nothing, it is deterministic, and its size is capped, so a turn's input tokens stay
flat however long the debate runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.settings import ContextSettings
from core.state import TurnRecord

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def trim(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(",;:") + "…"


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    parts = _SENTENCE_END.split(flat, maxsplit=1)
    return parts[0] if parts else flat


@dataclass(frozen=True)
class TranscriptContext:
    digest: str
    recent: str

    def render(self) -> str:
        blocks = []
        if self.digest:
            blocks.append(f"Earlier in the debate (digest):\n{self.digest}")
        blocks.append(f"Recent turns:\n{self.recent}" if self.recent else "No one has spoken yet.")
        return "\n\n".join(blocks)


LabelFn = Callable[[TurnRecord], str]


def default_label(turn: TurnRecord) -> str:
    return f"{turn.speaker.name} ({turn.role})"


class ContextBuilder:
    def __init__(self, settings: ContextSettings, label: LabelFn = default_label) -> None:
        self._s = settings
        self._label = label

    def line(self, turn: TurnRecord, limit: int | None = None) -> str:
        return f"[{self._label(turn)}] {trim(turn.text, limit or self._s.max_turn_chars)}"

    def build(self, turns: Sequence[TurnRecord], *, recent: int | None = None) -> TranscriptContext:
        n = recent or self._s.recent_turns
        older, latest = list(turns[:-n]) if len(turns) > n else [], list(turns[-n:])
        digest_lines: list[str] = []
        if older and self._s.digest_lines:
            shown = older[-self._s.digest_lines :]
            skipped = len(older) - len(shown)
            if skipped:
                digest_lines.append(f"({skipped} earlier turns not shown)")
            digest_lines += [
                f"- R{t.round} {self._label(t)}: {trim(first_sentence(t.text), self._s.digest_line_chars)}"
                for t in shown
            ]
        return TranscriptContext(
            digest="\n".join(digest_lines),
            recent="\n\n".join(self.line(t) for t in latest),
        )

    def last_messages(self, turns: Sequence[TurnRecord], count: int) -> str:
        return "\n\n".join(self.line(t) for t in turns[-count:])
