"""What the renderer asks the sender to do in the thread: plain data, no I/O.

Messages are named by a key (`opening`, `turn:t3`, `turn:t3:1`, `vote:v1`, `event:42`); the sender
maps keys to Slack timestamps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.models import PersonaRef

Block = dict[str, Any]

OPENING = "opening"


def turn_key(turn_id: str, part: int = 0) -> str:
    return f"turn:{turn_id}" if part == 0 else f"turn:{turn_id}:{part}"


def vote_key(vote_id: str) -> str:
    return f"vote:{vote_id}"


def event_key(seq: int) -> str:
    return f"event:{seq}"


@dataclass(frozen=True)
class Post:
    """A new message in the debate's thread; as the persona when `persona` is set."""

    key: str
    text: str
    blocks: tuple[Block, ...] = ()
    persona: PersonaRef | None = None
    reactions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Update:
    """New content for a posted message. `interim` updates may be throttled or skipped for a newer one.

    A final update of a message that was never posted (its post failed) posts it, as `persona`.
    """

    key: str
    text: str
    blocks: tuple[Block, ...] = ()
    interim: bool = False
    persona: PersonaRef | None = None


@dataclass(frozen=True)
class Delete:
    key: str


@dataclass(frozen=True)
class Upload:
    """A file for the thread (transcripts, a format's Markdown artifact, the results picture).

    Text is `str`; an image is `bytes`, with `alt` saying what it shows in words.
    """

    filename: str
    content: str | bytes
    title: str
    alt: str = ""


Op = Post | Update | Delete | Upload


def merged(ops: list[Op]) -> list[Op]:
    """The ops of events shown together: a card's post shows its newest state (its later final
    updates folded in), other updates of one message keep only the newest."""
    merged: list[Op] = []
    where: dict[str, int] = {}
    for op in ops:
        at = where.get(op.key) if isinstance(op, Post | Update) else None
        if at is not None and isinstance(op, Update):
            earlier = merged[at]
            if isinstance(earlier, Post):
                merged[at] = replace(earlier, text=op.text, blocks=op.blocks)
            else:
                merged[at] = op
            continue
        if isinstance(op, Post | Update):
            where[op.key] = len(merged)
        merged.append(op)
    return merged
