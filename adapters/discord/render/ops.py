"""What the bot shows, as plain data: messages, embeds ("cards") and display operations.

The renderer produces these; the sender turns them into discord.py calls. Nothing here talks to
Discord, so rendering is tested by comparing values.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.models import PersonaRef

MESSAGE_LIMIT = 2000
"""Characters in one Discord message."""


@dataclass(frozen=True)
class CardField:
    name: str
    value: str
    inline: bool = False


@dataclass(frozen=True)
class CardAuthor:
    name: str
    icon_url: str | None = None


@dataclass(frozen=True)
class Card:
    """An embed."""

    title: str = ""
    description: str = ""
    color: int | None = None
    fields: tuple[CardField, ...] = ()
    footer: str = ""
    author: CardAuthor | None = None
    image_url: str = ""  # "attachment://<filename>": a picture the post carries, shown in the embed


@dataclass(frozen=True)
class Attachment:
    filename: str
    content: str


@dataclass(frozen=True)
class Picture:
    """An image file a post carries (the results picture); `description` is its alt text."""

    filename: str
    data: bytes
    description: str = ""


@dataclass(frozen=True)
class Post:
    """One message. With `persona` set it is spoken by that persona (webhook or embed author)."""

    content: str = ""
    cards: tuple[Card, ...] = ()
    persona: PersonaRef | None = None
    attachment: Attachment | None = None
    picture: Picture | None = None


@dataclass(frozen=True)
class Show:
    """Make the messages of `slot` (a logical place in the thread, e.g. one turn or one vote card)
    look like `posts`: edit the ones already sent, send the missing ones, delete the surplus.

    `live` marks an interim state (streamed text, a running tally): the sender may hold it back to
    respect the edit rate and skip it when a newer state of the slot arrives first.
    """

    slot: str
    posts: tuple[Post, ...]
    live: bool = False


@dataclass(frozen=True)
class React:
    """Add the bot's own reactions to the first message of `slot` (a human ballot)."""

    slot: str
    emojis: tuple[str, ...]


Op = Show | React


def merged(ops: list[Op]) -> list[Op]:
    """The ops of events shown together: each message's newest state, in the place of its first."""
    merged: list[Op] = []
    where: dict[str, int] = {}
    for op in ops:
        if isinstance(op, Show) and op.slot in where:
            merged[where[op.slot]] = op
            continue
        if isinstance(op, Show):
            where[op.slot] = len(merged)
        merged.append(op)
    return merged


def route_of(op: Op) -> str:
    """Which of Discord's routes an operation takes: persona posts the webhook, the rest the bot."""
    return "webhook" if isinstance(op, Show) and any(p.persona is not None for p in op.posts) else "bot"
