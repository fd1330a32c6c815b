"""Tiny Block Kit builders. Texts passed in are mrkdwn that the caller has already escaped.

Every mrkdwn text object is `verbatim`: Slack then does not turn plain `@channel`, `@here`, channel
names or URLs written in a topic or a model's reply into mentions or links (only what the caller
wrote as `<…>` markup is one).
"""

from __future__ import annotations

from adapters.slack.render.ops import Block
from adapters.slack.render.text import truncate

SECTION_LIMIT = 3000
CONTEXT_LIMIT = 2000
MAX_BLOCKS = 50


def section(text: str) -> Block:
    return {"type": "section", "text": mrkdwn(truncate(text, SECTION_LIMIT))}


def mrkdwn(text: str) -> dict[str, object]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def sections(lines: list[str]) -> list[Block]:
    """Lines packed into as few sections as fit (one long line is truncated)."""
    out: list[Block] = []
    current = ""
    for line in lines:
        candidate = f"{current}\n{line}" if current else line
        if current and len(candidate) > SECTION_LIMIT:
            out.append(section(current))
            current = line
        else:
            current = candidate
    if current:
        out.append(section(current))
    return out


def context(*texts: str) -> Block:
    return {
        "type": "context",
        "elements": [mrkdwn(truncate(t, CONTEXT_LIMIT)) for t in texts if t][:10],
    }


def divider() -> Block:
    return {"type": "divider"}


def capped(blocks: list[Block]) -> tuple[Block, ...]:
    """At most Slack's 50 blocks per message."""
    return tuple(blocks[:MAX_BLOCKS])
