"""Prompt caching: which part of a prompt is stable within a debate, and how long it is.

A transcript-strategy prompt starts with the debate so far (core.context), one line per turn, none
of which ever changes. `cache_blocks` splits such a prompt into content blocks at turn boundaries
(their text, joined, is the prompt exactly) and marks the last transcript block as a cache
breakpoint: the next call of the same agent repeats every block up to there and appends new ones,
so the provider reads the earlier prefix from its cache and writes only what is new.
"""

from __future__ import annotations

from typing import Any

from core.context import TRANSCRIPT_HEADER

CHARS_PER_TOKEN = 4
"""A conservative estimate for English prose (Claude 5's tokenizer yields more tokens, not fewer)."""

EPHEMERAL = {"type": "ephemeral"}


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


def cache_blocks(prompt: str) -> list[dict[str, Any]] | None:
    """The prompt as text blocks with a breakpoint after the transcript, or None when it has none."""
    start = prompt.find(TRANSCRIPT_HEADER)
    if start < 0:
        return None
    pos = start + len(TRANSCRIPT_HEADER)
    if not prompt.startswith("[", pos):
        return None
    texts: list[str] = []
    first = True
    while True:
        end = prompt.find("\n\n", pos)
        if end < 0:  # the transcript runs to the end of the prompt
            texts.append(prompt[0 if first else pos :])
            tail = ""
            break
        end += 2
        texts.append(prompt[0 if first else pos : end])
        first = False
        pos = end
        if not prompt.startswith("[", pos):
            tail = prompt[pos:]
            break
    blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    blocks[-1]["cache_control"] = EPHEMERAL
    if tail:
        blocks.append({"type": "text", "text": tail})
    return blocks


def cacheable_prefix(system: str, prompt: str) -> int:
    """Estimated tokens of a call's stable prefix: its system prompt plus the transcript so far."""
    stable = 0
    for block in cache_blocks(prompt) or []:
        stable += estimate_tokens(block["text"])
        if "cache_control" in block:
            break
    else:
        stable = 0
    return estimate_tokens(system) + stable
