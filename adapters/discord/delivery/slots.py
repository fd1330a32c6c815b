"""What a Discord thread shows, slot by slot (the opening card, a turn, a vote card), as recorded
with the debate so that a restart finds its messages again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from adapters.discord.delivery.sender import Sent
from adapters.discord.render.ops import Post

SLOT_KEY = "discord.slot."
"""Binding key prefix: `discord.slot.<slot>` → the slot's messages (`Sent.encode`, comma-separated)."""
DELIVERED_KEY = "discord.delivered"
"""Binding key: the seq of the last event whose display operations were all applied."""
UNSEEN = Post(content="\0")
"""What a message restored after a restart shows when the log cannot say (it is edited regardless)."""


@dataclass
class Slot:
    messages: list[Sent] = field(default_factory=list)
    posts: list[Post] = field(default_factory=list)


def as_int(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None


def recorded_slots(values: Mapping[str, str]) -> Iterator[tuple[str, list[Sent]]]:
    for key, value in values.items():
        if key.startswith(SLOT_KEY) and value:
            sent = [Sent.decode(part) for part in value.split(",")]
            if all(s is not None for s in sent):
                yield key.removeprefix(SLOT_KEY), [s for s in sent if s is not None]
