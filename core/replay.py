"""Resuming a debate: its format runs again from the start against the stored event log.

While the log lasts, every event the format emits must match the next stored one (it is not stored
or delivered again: the channel has seen it); model calls are answered from memory (`CallMemo`),
the clock is restored from the logged times, and people's votes and streamed text are applied as
they come in the log. When the log runs out the debate is live again, at the step that was in
flight: a turn that was being spoken starts over (its partial text is replaced), a vote window that
was open reopens for the time it had left. A format that takes a different path (its code or the
config changed) cannot be resumed; `ResumeMismatch` says where.

One rule makes the replay deterministic whatever order things landed in: inside a vote, its people's
window and its AI votes run side by side (the window may wait for its card while the AI votes are
stored, or open at once), so an event of a vote that is not next in the log is looked for among
the vote's events that follow, up to its close (`VOTE_SIDE`). Everything else keeps its order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from core.errors import DebateError
from core.events import (
    DebateStarted,
    Event,
    HumanVoteOpened,
    Notice,
    PhaseChanged,
    SpeakerSwitched,
    TurnCompleted,
    TurnDelta,
    TurnStarted,
    Verdict,
    VoteCast,
    VoteWithdrawn,
    VotingClosed,
    VotingStarted,
)
from core.models import VoteOption

CARD_NOT_SHOWN_CODE = "vote_card_not_shown"
"""The notice a window gives when its card could not be shown (it then goes on without people)."""

MIN_REOPENED_WINDOW = 10.0
"""A window that was open when the bot stopped reopens for at least this long, so people see it."""


class ResumeMismatch(DebateError):
    """The format took a different path than the stored debate did."""


def from_outside(event: Event) -> bool:
    """People's votes reach the log from the channel, not from the format."""
    return (isinstance(event, VoteCast) and event.voter.human) or isinstance(event, VoteWithdrawn)


SESSION_NOTICES = frozenset(
    {
        "store_paused",
        "store_unavailable",
        "store_resumed",
        "taken_over",
        "model_paused",
        "model_back",
        "model_unavailable",
        "platform_unavailable",
    }
)
"""Notices the session adds on its own (a store, model or platform outage, a takeover): no format
emits them again, so a debate one of them stopped resumes past it."""


def from_session(event: Event) -> bool:
    return isinstance(event, Notice) and event.code in SESSION_NOTICES


def _vote_side(event: Event) -> bool:
    """Events that the two sides of an open vote (the people's window, the AI votes) emit."""
    return isinstance(event, HumanVoteOpened | Notice) or (
        isinstance(event, VoteCast) and not event.voter.human
    )


def _within_vote(event: Event) -> bool:
    """Events that may lie between a vote's start and its close while both sides run."""
    return _vote_side(event) or from_outside(event) or isinstance(event, TurnDelta)


def _identity(event: Event) -> tuple[Any, ...]:
    match event:
        case DebateStarted():
            return (event.kind, event.format)
        case PhaseChanged():
            return (event.kind, event.phase)
        case TurnStarted():
            return (event.kind, event.turn_id, event.speaker.id, event.attempt)
        case TurnCompleted():
            return (event.kind, event.turn_id, event.speaker.id, event.fallback)
        case VotingStarted() | HumanVoteOpened():
            return (event.kind, event.vote_id)
        case VoteCast():
            return (event.kind, event.vote_id, event.voter.id, event.choice)
        case VotingClosed():
            return (event.kind, event.vote_id, event.decision)
        case SpeakerSwitched():
            return (event.kind, event.old.id, event.new.id)
        case Verdict():
            return (event.kind, event.title, event.winner)
        case _:
            return (event.kind,)


def _same(stored: Event, event: Event) -> bool:
    """Whether a stored event found out of order is the one the format emits (a notice: its code)."""
    if _identity(stored) != _identity(event):
        return False
    return not isinstance(event, Notice) or (isinstance(stored, Notice) and stored.code == event.code)


def _describe(event: Event) -> str:
    return " ".join(str(part) for part in _identity(event))


class Replay:
    """The stored log, consumed in order while the format catches up (a vote's two sides aside)."""

    def __init__(self, events: Sequence[Event]) -> None:
        self._events = list(events)
        self._pos = 0
        self._taken: set[int] = set()  # events of a vote matched ahead of their place in the log
        self.resumed_after: Event | None = None  # the last event the format matched before going live
        self._taken_over = False

    def _left(self) -> list[int]:
        """Indexes of the events not consumed yet, in log order."""
        return [i for i in range(self._pos, len(self._events)) if i not in self._taken]

    def _advance(self) -> None:
        while self._pos in self._taken:
            self._taken.discard(self._pos)
            self._pos += 1

    @property
    def events(self) -> list[Event]:
        """The whole stored log, consumed or not."""
        return list(self._events)

    @property
    def active(self) -> bool:
        self._advance()
        return self._pos < len(self._events)

    @property
    def last_seq(self) -> int:
        return self._events[-1].seq if self._events else 0

    def passive(self) -> list[Event]:
        """People's votes and streamed text next in the log: consumed here, applied by the caller."""
        taken = []
        while self.active and _passive(self._events[self._pos]):
            taken.append(self._events[self._pos])
            self._pos += 1
        return taken

    def match(self, event: Event) -> Event:
        """The stored event the format's `event` stands for; ResumeMismatch if it took another path.

        Inside a vote, an event of either side may be found further on, up to the vote's close."""
        self._advance()
        stored = self._events[self._pos]
        if _identity(stored) == _identity(event):
            self._pos += 1
        else:
            ahead = self._vote_side_ahead(event)
            if ahead is None:
                said, now = _describe(stored), _describe(event)
                raise ResumeMismatch(f"event #{stored.seq} was '{said}' but the debate now says '{now}'")
            self._taken.add(ahead)
            stored = self._events[ahead]
        self.resumed_after = stored
        return stored

    def _vote_side_ahead(self, event: Event) -> int | None:
        """Where `event`, one side of an open vote, lies among the vote's events that follow."""
        if not _vote_side(event) or not _vote_side(self._events[self._pos]):
            return None
        for i in self._left():
            candidate = self._events[i]
            if not _within_vote(candidate):
                return None  # the vote closed (or something else happened) first
            if _same(candidate, event):
                return i
        return None

    def rest(self) -> list[Event]:
        """Everything left (the log ended inside a vote window): consumed, applied by the caller."""
        taken = [self._events[i] for i in self._left()]
        self._pos, self._taken = len(self._events), set()
        return taken

    def next_described(self) -> str:
        """The next stored event the format still has to match, for a ResumeMismatch."""
        for i in self._left():
            if not _passive(self._events[i]):
                return f"event #{self._events[i].seq} '{_describe(self._events[i])}'"
        return "the end of the log"

    def only_outside_left(self) -> bool:
        """Whether all that is left came from outside (people's votes, streamed text, session notices)."""
        return all(_passive(self._events[i]) for i in self._left())

    # --- where the debate stood -----------------------------------------------------------------

    def restarts(self, turn_id: str) -> bool:
        """Whether the next stored event (past streamed text and votes) starts this turn again."""
        for i in self._left():
            event = self._events[i]
            if _passive(event):
                continue
            return isinstance(event, TurnStarted) and event.turn_id == turn_id
        return False

    def took_over_in_turn(self, turn_id: str) -> int | None:
        """The attempt that was being spoken when the debate stopped, once, if it was this turn."""
        after = self.resumed_after
        if self.active or self._taken_over or not isinstance(after, TurnStarted) or after.turn_id != turn_id:
            return None
        self._taken_over = True
        return after.attempt

    def window_closed_ahead(self, vote_id: str) -> bool:
        return any(
            isinstance(e, VotingClosed) and e.vote_id == vote_id
            for e in (self._events[i] for i in self._left())
        )

    def window_logged(self, vote_id: str) -> Literal["opened", "not_shown", "unopened"]:
        """How the log says this vote's people's window went: opened, its card never shown, or
        not at all yet (the debate stopped while the window waited for its card)."""
        for i in self._left():
            event = self._events[i]
            if isinstance(event, VotingClosed) and event.vote_id == vote_id:
                break
            if isinstance(event, HumanVoteOpened) and event.vote_id == vote_id:
                return "opened"
            if isinstance(event, Notice) and event.code == CARD_NOT_SHOWN_CODE:
                return "not_shown"
            if not _within_vote(event):
                break
        return "unopened"

    def people_tally(self, vote_id: str, options: Sequence[VoteOption]) -> dict[str, int]:
        """People's tally when the window closed, from the votes stored before VotingClosed."""
        votes: dict[str, str] = {}
        for event in self._events:
            if isinstance(event, VotingClosed) and event.vote_id == vote_id:
                break
            if isinstance(event, VoteCast) and event.voter.human and event.vote_id == vote_id:
                votes[event.voter.id] = event.choice
            elif isinstance(event, VoteWithdrawn) and event.vote_id == vote_id:
                votes.pop(event.voter.id, None)
        counts = Counter(votes.values())
        return {o.key: counts.get(o.key, 0) for o in options}

    def time_left(self, opened: HumanVoteOpened, window: float) -> float:
        """How long the window had left when the log ends (the last stored event), at least a little."""
        last: datetime = self._events[-1].at if self._events else opened.at
        spent = max(0.0, (last - opened.at).total_seconds())
        return max(MIN_REOPENED_WINDOW, window - spent)


def _passive(event: Event) -> bool:
    return from_outside(event) or from_session(event) or isinstance(event, TurnDelta)
