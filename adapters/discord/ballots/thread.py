"""The vote cards of one debate thread: each card's reaction ballot, tracked by its message so a
reaction finds it, or its voting buttons (`discord.ballot: buttons`), opened and closed with the
debate's windows."""

from __future__ import annotations

from dataclasses import dataclass

import discord

from adapters.discord.ballots.buttons import show_buttons
from adapters.discord.ballots.reactions import CardBallot, CardRegistry
from core.events import HumanVoteOpened, VotingStarted
from core.models import VoteOption
from core.session import DebateHandle


@dataclass(frozen=True)
class OpenCard:
    """A vote card whose people's window may still open or is open (after a restart)."""

    vote_id: str
    message_id: int
    ballot: CardBallot


class ThreadBallots:
    def __init__(self, thread: discord.Thread, cards: CardRegistry, *, buttons: bool) -> None:
        self.buttons = buttons
        self._thread = thread
        self._cards = cards
        self._ballots: dict[str, tuple[CardBallot, list[int]]] = {}  # vote id → ballot, card messages
        self._button_options: dict[str, tuple[VoteOption, ...]] = {}
        self._buttons_up: set[str] = set()  # votes whose open window's buttons are on the card
        self._handle: DebateHandle | None = None

    def bind(self, handle: DebateHandle) -> None:
        self._handle = handle
        for ballot, _ in self._ballots.values():
            ballot.bind(handle)

    def open(self, event: VotingStarted, ids: list[int]) -> CardBallot | None:
        """The card's reaction ballot, tracked from the moment the card exists (`ids`: its messages)."""
        if event.humans == "off" or not ids:
            return None
        found = self._ballots.get(event.vote_id)
        if found is None:
            found = self._ballots[event.vote_id] = (
                CardBallot(event.vote_id, event.options, self._handle),
                ids,
            )
            self._cards.track(ids[0], found[0])
        return found[0]

    def card(self, vote_id: str) -> CardBallot | None:
        return found[0] if (found := self._ballots.get(vote_id)) is not None else None

    def buttons_shown(self, vote_id: str) -> bool:
        """Whether the open window's buttons are on its card (button ballots)."""
        return vote_id in self._buttons_up

    async def window_opened(self, event: HumanVoteOpened, ids: list[int], debate_id: str | None) -> None:
        if self.buttons:
            self._button_options[event.vote_id] = event.options
            if await self._show_buttons(event.vote_id, ids, debate_id, closed=False):
                self._buttons_up.add(event.vote_id)
            return
        found = self._ballots.get(event.vote_id)
        if found is not None:
            await found[0].window_opened_for(event.options)

    async def closed(self, vote_id: str, ids: list[int], debate_id: str | None) -> None:
        self._buttons_up.discard(vote_id)
        if self.buttons and vote_id in self._button_options:
            await self._show_buttons(vote_id, ids, debate_id, closed=True)
        self._untrack(vote_id)

    async def sync(self) -> None:
        """After a restart: the reactions may have changed while the bot was away (button votes are
        in the log already)."""
        if not self.buttons:
            for ballot, _ in list(self._ballots.values()):
                await ballot.sync()

    def untrack_all(self) -> None:
        for vote_id in list(self._ballots):
            self._untrack(vote_id)

    def _untrack(self, vote_id: str) -> None:
        found = self._ballots.pop(vote_id, None)
        if found is not None:
            for message_id in found[1]:
                self._cards.untrack(message_id)

    async def _show_buttons(
        self, vote_id: str, ids: list[int], debate_id: str | None, *, closed: bool
    ) -> bool:
        if not ids or debate_id is None:
            return False
        options = self._button_options[vote_id]
        return await show_buttons(self._thread, ids[0], debate_id, vote_id, options, closed=closed)
