"""What a Slack debate's delivery queue holds besides its events (adapters/delivery/queue.py): the
caught-up thread's refresh after a restart and the countdown redraws of open vote cards; which of
them a window's opening may overtake; how each is named in the log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.events import ClockTick, Event, VoteCast, VoteWithdrawn


@dataclass(frozen=True)
class Queued:
    event: Event
    live: bool = True  # False: a stored event the thread never got, caught up after a restart


@dataclass(frozen=True)
class Resumed:
    """Refresh the opening card once the thread has caught up after a restart."""


@dataclass(frozen=True)
class Countdown:
    """Redraw a vote card for `now` (how long its people's window has left)."""

    vote_id: str
    now: datetime


Item = Queued | Resumed | Countdown


def yields_to_opening(item: Item) -> bool:
    """Whether a window's opening may go ahead of `item` (an edit it does not depend on)."""
    if isinstance(item, Countdown):
        return True
    return isinstance(item, Queued) and isinstance(item.event, VoteCast | VoteWithdrawn | ClockTick)


def describe(item: Item) -> str:
    if isinstance(item, Resumed):
        return "the caught-up thread"
    if isinstance(item, Countdown):
        return f"the countdown of vote {item.vote_id}"
    return f"{item.event.kind} #{item.event.seq}"
