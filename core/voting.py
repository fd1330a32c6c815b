"""Human ballots: the window in which people in the channel may vote, and their votes.

AI votes are gathered by each format (their failure rules differ); people's votes arrive through
the debate handle at any moment and are accepted only while a window is open.

A window's clock starts when people can act on it: a front end that reports delivery
(`CardsShown`) says when the window's card shows its ballot and its countdown (the edit that the
window's opening makes), and the clock starts then, so people get the whole configured time however
far behind the platform is. A card or ballot that cannot be shown at all makes the vote go on as if
nobody voted, and the thread is told. A front end whose reaction events may come late or not at all
(`LastLook`) reads the card once more as the window closes, so the result counts what it shows.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal, Protocol

from core.clock import Clock
from core.errors import BallotClosedError, BallotError, InvalidChoiceError
from core.events import Emit, HumanVoteOpened, Notice, VoteCast, VoteWithdrawn
from core.models import VoteOption, Voter
from core.replay import CARD_NOT_SHOWN_CODE
from core.state import DebateState


class WindowResume(Protocol):
    """What a resumed debate knows about a vote window from its stored log."""

    @property
    def replaying(self) -> bool: ...

    def logged(self, event: HumanVoteOpened) -> bool: ...

    def window_closed_ahead(self, vote_id: str) -> bool: ...

    def window_logged(self, vote_id: str) -> Literal["opened", "not_shown", "unopened"]: ...

    async def caught_up(self) -> None: ...

    def people_tally(self, vote_id: str, options: Sequence[VoteOption]) -> dict[str, int]: ...

    async def reopen(self, opened: HumanVoteOpened, window: float) -> float: ...


LastLook = Callable[[str], Awaitable[None]]
"""The front end reads a window's card (by vote id) as it closes and counts it as it stands."""

CARD_WAIT = 120.0
"""Seconds a window waits for its card to be shown before the vote goes on without people (counted
only while the front end works on the card: not while earlier events are still being delivered,
nor while the platform is down)."""
CARD_WAIT_LIMIT = 900.0
"""Seconds a window waits for its card at most, however the time was spent."""
WAIT_STEP = 1.0
"""How often that wait looks whether the platform is down (time it is down does not count)."""
CARD_NOT_SHOWN = (
    "The vote card or its ballot could not be shown here, so this vote went ahead as if nobody voted."
)


class CardsShown:
    """The front end's reports that a window's card shows its ballot and countdown (after the window
    opened), or cannot, and how far its delivery has got. Neither an outage nor a backlog uses up
    the wait: while the platform is reported `down`, or events before the card are still being
    delivered (one debate's final texts queued behind another's on a shared webhook, say), the card
    is owed, not refused."""

    def __init__(self, down: Callable[[], bool] = lambda: False) -> None:
        self._shown: dict[str, bool] = {}
        self._changed: dict[str, asyncio.Event] = {}
        self._down = down
        self._delivered = 0  # the highest event seq the front end has shown

    def report(self, vote_id: str, shown: bool) -> None:
        self._shown[vote_id] = shown
        self._changed.setdefault(vote_id, asyncio.Event()).set()

    def delivered(self, seq: int) -> None:
        """The front end has shown every event up to `seq`."""
        self._delivered = max(self._delivered, seq)

    async def wait(self, vote_id: str, within: float, *, after: int = 0) -> bool:
        """Whether the card is visible; waits for the report at most `within` seconds of the front
        end working on the card (every event up to `after` shown, the platform up), and at most
        `CARD_WAIT_LIMIT` seconds in all."""
        changed = self._changed.setdefault(vote_id, asyncio.Event())
        left, limit = within, CARD_WAIT_LIMIT
        while vote_id not in self._shown and left > 0 and limit > 0:
            step = min(WAIT_STEP, left)
            try:
                await asyncio.wait_for(changed.wait(), step)
            except TimeoutError:
                limit -= step
                if not self._down() and self._delivered >= after:
                    left -= step
        return self._shown.get(vote_id, False)


class HumanBallots:
    def __init__(
        self,
        emit: Emit,
        state: DebateState,
        clock: Clock,
        resume: WindowResume | None = None,
        cards: CardsShown | None = None,
        last_look: LastLook | None = None,
    ) -> None:
        self._emit = emit
        self._last_look = last_look
        self._state = state
        self._clock = clock
        self._resume = resume
        self.cards = cards  # None: the front end does not report delivery (the window opens at once)
        self._closed: set[str] = set()
        self._on_card: dict[str, dict[str, tuple[str, str | None]]] = {}  # read back, window not open yet

    def is_open(self, vote_id: str) -> bool:
        ballot = self._state.ballots.get(vote_id)
        return ballot is not None and ballot.human_open and vote_id not in self._closed

    async def run_window(
        self,
        vote_id: str,
        options: tuple[VoteOption, ...],
        window: float,
        reason: Literal["tie", "vote"],
    ) -> dict[str, int]:
        """Open the window, wait it out on the debate's clock, close it; the people's tally.

        In a resumed debate a window that closed before the restart gives its stored tally at once;
        one that was open when the bot stopped reopens for the time it had left (once the AI votes
        stored meanwhile were matched, whichever came first), its clock starting when its card
        shows again, and one that was still waiting for its card waits for it again. Votes read
        back from the card meanwhile count from the start.
        """
        resume = self._resume
        if resume is not None and resume.replaying:
            logged = resume.window_logged(vote_id)
            if logged == "not_shown":
                await self._emit(Notice(level="warning", code=CARD_NOT_SHOWN_CODE, message=CARD_NOT_SHOWN))
                return self.close(vote_id)
            if logged == "unopened" and resume.window_closed_ahead(vote_id):
                return self.close(vote_id)  # the vote went on without people before the restart
            if logged == "unopened":
                await resume.caught_up()
        live = not (resume is not None and resume.replaying)
        opened: HumanVoteOpened = await self._emit(
            HumanVoteOpened(vote_id=vote_id, options=options, window=window, reason=reason)
        )
        ballot = self._state.ballots.get(vote_id)
        before_card = (ballot.started_seq if ballot is not None else opened.seq) - 1
        if live and not await self._card_shown(vote_id, after=before_card):
            return self.close(vote_id)
        if resume is not None and resume.logged(opened):
            if resume.window_closed_ahead(vote_id):
                self._closed.add(vote_id)
                return resume.people_tally(vote_id, options)
            left = await resume.reopen(opened, window)
            await self._emit(HumanVoteOpened(vote_id=vote_id, options=options, window=left, reason=reason))
            window = left
            # its clock starts when the card shows again, as a live one's: a card found in the thread
            # after the restart is shown at once; one the process never got up is delivered first
            if not await self._card_shown(vote_id, after=before_card):
                return self.close(vote_id)
        card = self._on_card.pop(vote_id, None)  # read back from the card while catching up
        if card is not None:
            await self._match_card(vote_id, card)
        await self._clock.sleep(window)
        if self._last_look is not None:  # bounded by the front end (a platform down: what it has)
            await self._last_look(vote_id)
        return self.close(vote_id)

    async def _card_shown(self, vote_id: str, *, after: int) -> bool:
        """Whether the card shows the ballot and countdown (at once for a front end that does not
        report it); when it cannot, the debate says so and the window goes on without people."""
        if self.cards is None or await self.cards.wait(vote_id, CARD_WAIT, after=after):
            return True
        await self._emit(Notice(level="warning", code=CARD_NOT_SHOWN_CODE, message=CARD_NOT_SHOWN))
        return False

    async def votes_on_card(self, vote_id: str, votes: Mapping[str, tuple[str, str | None]]) -> None:
        """The people's votes a card shows now (person → choice, name), read back after a restart:
        the debate's record is made to match (votes cast, changed or taken back while no process
        ran). While a resumed debate still catches up, or its window waits for the card, they are
        kept until the window opens; a window that closed meanwhile ignores them."""
        catching_up = self._resume is not None and self._resume.replaying
        if not catching_up and self.is_open(vote_id):
            await self._match_card(vote_id, votes)
        elif vote_id not in self._closed:  # its window is still to (re)open
            self._on_card[vote_id] = dict(votes)

    async def _match_card(self, vote_id: str, votes: Mapping[str, tuple[str, str | None]]) -> None:
        for person, (choice, name) in votes.items():
            with contextlib.suppress(BallotError):
                await self.cast(vote_id, person, choice, name)
        ballot = self._state.ballots.get(vote_id)
        for person in list(ballot.human_votes if ballot is not None else ()):
            if person not in votes:
                with contextlib.suppress(BallotError):
                    await self.withdraw(vote_id, person)

    def close(self, vote_id: str) -> dict[str, int]:
        self._closed.add(vote_id)
        ballot = self._state.ballots.get(vote_id)
        return ballot.human_tally() if ballot is not None else {}

    async def cast(self, vote_id: str, voter_id: str, choice: str, voter_name: str | None = None) -> None:
        if self._resume is not None and self._resume.replaying:
            raise BallotClosedError("The debate is catching up after a restart; vote again in a moment.")
        if not self.is_open(vote_id):
            raise BallotClosedError(f"Voting on {vote_id} is not open to people right now.")
        ballot = self._state.ballots[vote_id]
        window = ballot.human_window
        options = window.options if window is not None else ballot.options  # a tie offers only the tied
        keys = [o.key for o in options]
        if choice not in keys:
            raise InvalidChoiceError(f"{choice!r} is not an option; choose one of {', '.join(keys)}.")
        current = ballot.human_votes.get(voter_id)
        if current is not None and current.choice == choice:
            return
        voter = Voter(id=voter_id, name=voter_name or voter_id, human=True)
        await self._emit(VoteCast(vote_id=vote_id, voter=voter, choice=choice))

    async def withdraw(self, vote_id: str, voter_id: str) -> None:
        if self._resume is not None and self._resume.replaying:
            raise BallotClosedError("The debate is catching up after a restart; vote again in a moment.")
        if not self.is_open(vote_id):
            raise BallotClosedError(f"Voting on {vote_id} is not open to people right now.")
        current = self._state.ballots[vote_id].human_votes.get(voter_id)
        if current is not None:
            await self._emit(VoteWithdrawn(vote_id=vote_id, voter=current.voter))
