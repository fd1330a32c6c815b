"""What a Discord thread shows, slot by slot (the opening card, a turn, a vote card), as recorded
with the debate so that a restart finds its messages again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from adapters.discord.delivery.sender import Sent
from adapters.discord.render.events import DiscordView
from adapters.discord.render.ops import Post, Show
from core.events import Event, TurnDelta, VotingClosed, VotingStarted

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


def restore_slots(
    view: DiscordView, events: Sequence[Event], values: Mapping[str, str]
) -> tuple[dict[str, Slot], list[Event], list[VotingStarted]]:
    """Render the stored log into `view` without sending anything, up to the last event the thread
    is known to have received: each slot's recorded messages and what they show, the events stored
    but never shown (delivered first after a restart), and the vote cards people may still vote on."""
    recorded = dict(recorded_slots(values))
    delivered = as_int(values.get(DELIVERED_KEY))
    if delivered is None:  # nothing was delivered, or this debate predates the record of it
        delivered = events[-1].seq if recorded and events else 0
    shown: dict[str, tuple[Post, ...]] = {}
    started: dict[str, VotingStarted] = {}
    closed: set[str] = set()
    unsent: list[Event] = []
    for event in events:
        if event.seq > delivered:
            if isinstance(event, TurnDelta):
                view.render(event)  # interim text: the turn's end or its restart replaces it
            else:
                unsent.append(event)
            continue
        for op in view.render(event):
            if isinstance(op, Show):
                shown[op.slot] = op.posts
        if isinstance(event, VotingStarted):
            started[event.vote_id] = event
        elif isinstance(event, VotingClosed):
            closed.add(event.vote_id)
    slots = {}
    for slot, sent in recorded.items():  # a message the log cannot say shows UNSEEN (edited regardless)
        posts = list(shown.get(slot, ()))
        slots[slot] = Slot(list(sent), posts if len(posts) == len(sent) else [UNSEEN] * len(sent))
    return slots, unsent, [e for vote_id, e in started.items() if vote_id not in closed and e.humans != "off"]
