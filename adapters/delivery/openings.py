"""What a vote window's opening takes with it out of a debate's delivery queue (both front ends).

A window's clock starts once people can act on it, so its opening goes ahead of its card's queued
AI-vote edits (an urgent item, `adapters/delivery/queue.py`). When a card is about to be posted and
its window's opening is already queued behind it, one post shows the card open; when the opening is
shown, the AI votes on the same card that were stored before it and are still queued are shown by
the same edit. `event_of` reads a queued item's event (None: an item that is no event, or that must
not be taken along).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from core.events import Event, HumanVoteOpened, VoteCast, VoteWithdrawn, VotingStarted

Item = TypeVar("Item")
Pull = Callable[[Callable[[Item], bool]], Item | None]


def queued_opening(
    pull: Pull[Item], card: VotingStarted, event_of: Callable[[Item], Event | None]
) -> Item | None:
    """The opening of `card`'s window, if it is queued: taken out of the queue."""

    def opening(item: Item) -> bool:
        event = event_of(item)
        return isinstance(event, HumanVoteOpened) and event.vote_id == card.vote_id

    return pull(opening)


def overtaken_votes(
    pull: Pull[Item], window: HumanVoteOpened, event_of: Callable[[Item], Event | None]
) -> list[Item]:
    """The AI votes on `window`'s card stored before it and still queued: taken out, in order."""

    def overtaken(item: Item) -> bool:
        event = event_of(item)
        same_card = isinstance(event, VoteCast | VoteWithdrawn) and event.vote_id == window.vote_id
        return same_card and event is not None and event.seq < window.seq

    taken = []
    while (item := pull(overtaken)) is not None:
        taken.append(item)
    return taken


def shown_together(pull: Pull[Item], item: Item, event_of: Callable[[Item], Event | None]) -> list[Item]:
    """`item` and the queued items one post or edit shows with it, in the order they render: a
    card with its window's opening (`queued_opening`), and the AI votes the opening overtook
    (`overtaken_votes`)."""
    event = event_of(item)
    window: Item = item
    if isinstance(event, VotingStarted):  # a window already opening on it: one post shows both
        window = queued_opening(pull, event, event_of) or item
    opening = event_of(window)
    if not isinstance(opening, HumanVoteOpened):
        return [item]
    votes = overtaken_votes(pull, opening, event_of)
    return [item, *votes, window] if window is not item else [*votes, item]
