"""A resumed debate catching up with its stored log (see core.replay for the rules).

While the log lasts, each event the format emits stands for the next stored one: that stored event
(with the people's votes and streamed text around it) goes into the state, and its clock readings
into the debate clock, instead of being stored and shown again. The vote windows of a resumed
debate ask here what the log says about them (`core.voting.WindowResume`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Literal

from core.clock import DebateClock
from core.events import ClockTick, E, Event, HumanVoteOpened, TurnCompleted
from core.models import VoteOption
from core.replay import Replay, ResumeMismatch
from core.state import DebateState

log = logging.getLogger(__name__)


STALLED = 60.0
"""Seconds a vote window waits for the other side of its vote to match the log before the replay is
taken to have gone another way (recalled calls answer at once: this never happens on one path)."""


class CatchUp:
    """The stored log of a resumed debate (none for a new one), applied as the format replays it."""

    def __init__(self, debate_id: str, replay: Replay | None, state: DebateState, clock: DebateClock) -> None:
        self._debate_id = debate_id
        self._replay = replay
        self._state = state
        self._clock = clock
        self._progress = asyncio.Event()  # set whenever the format matched a stored event

    @property
    def resumed(self) -> bool:
        """Whether this debate was resumed from a stored log."""
        return self._replay is not None

    @property
    def last_seq(self) -> int:
        """The seq of the last stored event (0 for a new debate): new events follow it."""
        return self._replay.last_seq if self._replay is not None else 0

    def stored(self, event: E) -> E | None:
        """While the log lasts: the stored event `event` stands for, applied. None once live."""
        replay = self._replay
        if replay is None or not replay.active:
            return None
        self.apply(replay.passive())
        if not replay.active:
            return None
        stored = replay.match(event)
        self._progress.set()
        self.apply([stored])
        self.apply(replay.passive())
        if not replay.active:
            log.info("debate %s: caught up with its log at #%d; live again", self._debate_id, self.last_seq)
        if not isinstance(stored, type(event)):  # match() compares kinds, so this cannot happen
            raise ResumeMismatch(f"event #{stored.seq} is a {stored.kind}, not a {event.kind}")
        return stored

    def finish(self) -> None:
        """Apply whatever is left of the log (what follows is new, whatever happened)."""
        if self._replay is not None:
            self.apply(self._replay.rest())

    def apply(self, events: Sequence[Event]) -> None:
        """Events from the stored log: into the state, and their clock readings into the clock."""
        clock = self._clock
        for event in events:
            self._state.apply(event)
            if isinstance(event, TurnCompleted) and event.elapsed is not None:
                clock.restore(elapsed=event.elapsed, paused_total=clock.paused_total, paused=clock.paused)
            elif isinstance(event, ClockTick):
                clock.restore(elapsed=event.elapsed, paused_total=event.paused_total, paused=event.paused)

    # --- what a resumed debate's vote windows ask (WindowResume) ----------------------------------

    @property
    def replaying(self) -> bool:
        return self._replay is not None and self._replay.active

    def logged(self, event: HumanVoteOpened) -> bool:
        return self._replay is not None and event.seq <= self._replay.last_seq

    def window_closed_ahead(self, vote_id: str) -> bool:
        return self._replay is not None and self._replay.window_closed_ahead(vote_id)

    def window_logged(self, vote_id: str) -> Literal["opened", "not_shown", "unopened"]:
        if self._replay is None:
            return "unopened"
        return self._replay.window_logged(vote_id)

    async def caught_up(self) -> None:
        """Wait until the other side of a vote (its AI votes) matched what it stored, then apply
        what is left of the log (people's votes, streamed text): from here on the debate is live."""
        replay = self._replay
        if replay is None:
            return
        while not replay.only_outside_left():
            self._progress.clear()
            try:
                await asyncio.wait_for(self._progress.wait(), STALLED)
            except TimeoutError:
                raise ResumeMismatch(f"the debate never came back to {replay.next_described()}") from None
        self.apply(replay.rest())

    def people_tally(self, vote_id: str, options: Sequence[VoteOption]) -> dict[str, int]:
        assert self._replay is not None
        return self._replay.people_tally(vote_id, options)

    async def reopen(self, opened: HumanVoteOpened, window: float) -> float:
        """The window was open when the bot stopped: catch up with the log; the time it had left."""
        assert self._replay is not None
        await self.caught_up()
        return self._replay.time_left(opened, window)
