"""The context each prompt sees: a bounded view, or the append-only transcript.

Bounded: recent turns verbatim plus a running digest of older ones. The digest is extractive (each
older turn's opening sentence, trimmed) rather than written by a model: it costs nothing, it is
deterministic, and its size is capped, so a turn's input tokens stay flat however long the debate
runs.

Transcript: the same digest of older turns, then every turn since the last fold verbatim, one line
each under TRANSCRIPT_HEADER. Older turns fold into the digest only every `window` turns, so
between folds nothing before the newest line changes: each prompt begins with the previous one's
context and `core.llm.caching` marks it for the provider's prompt cache. The context is never
smaller than the bounded one (at least `recent_turns` verbatim), and the reads stay cheap because
a fold caps how long the cached prefix grows.
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


TRANSCRIPT_HEADER = "Turn by turn, in order:\n"


@dataclass(frozen=True)
class TranscriptContext:
    digest: str
    recent: str
    full: bool = False

    def render(self) -> str:
        blocks = []
        if self.full:
            if self.digest:
                blocks.append(f"Earlier in the debate (digest):\n{self.digest}")
            blocks.append(TRANSCRIPT_HEADER + self.recent if self.recent else "No one has spoken yet.")
            return "\n\n".join(blocks)
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
        if recent is None and self._s.strategy == "transcript":
            n, window = self._s.recent_turns, self._s.window
            fold = max(0, (len(turns) - n) // window * window)
            return TranscriptContext(
                digest=self._digest(turns[:fold]),
                recent="\n\n".join(self.line(t) for t in turns[fold:]),
                full=True,
            )
        n = recent or self._s.recent_turns
        older, latest = list(turns[:-n]) if len(turns) > n else [], list(turns[-n:])
        return TranscriptContext(
            digest=self._digest(older),
            recent="\n\n".join(self.line(t) for t in latest),
        )

    def _digest(self, older: Sequence[TurnRecord]) -> str:
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
        return "\n".join(digest_lines)

    def last_messages(self, turns: Sequence[TurnRecord], count: int) -> str:
        return "\n\n".join(self.line(t) for t in turns[-count:])
