"""The vote cards of one debate thread: each card's reaction ballot, tracked by its message so a
reaction finds it, or its voting buttons (`discord.ballot: buttons`), opened and closed with the
debate's windows; and each card's reactions read from Discord where the gateway's reaction events
may have been missed (a restart, a new gateway session)."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

import discord

from adapters.discord.ballots.buttons import show_buttons
from adapters.discord.ballots.reactions import CardBallot, CardRegistry
from core.events import HumanVoteOpened, VotingStarted
from core.models import VoteOption
from core.session import DebateHandle

log = logging.getLogger(__name__)

People = dict[str, tuple[str, list[str]]]
"""Who reacts on a card: person id → (display name, the option emoji they react with)."""


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

    async def read_again(self, me: int) -> None:
        """The gateway's reaction events since the last read may be lost (a new gateway session, not
        a resumed one, after Discord's gateway dropped): every open card's reactions are read again
        and taken as they are (button votes are interactions, refused while the gateway was away)."""
        if self.buttons:
            return
        for ballot, ids in list(self._ballots.values()):
            read_when = dict(ballot.recorded())
            people = await read_card(self._thread, ids[0], ballot, me)
            if people is not None:
                await ballot.card_read_again(people, read_when)

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


async def read_card(thread: discord.Thread, message_id: int, ballot: CardBallot, me: int) -> People | None:
    """Who reacts with which of the card's option emoji now (the bot and other bots left out); None
    when Discord could not say (the card is gone, or Discord is unwell)."""
    try:
        message = await thread.fetch_message(message_id)
    except discord.HTTPException as exc:
        log.warning("could not read vote card %s of %s (%s)", message_id, ballot.vote_id, exc.status)
        return None
    people: People = {}
    for reaction in message.reactions:
        emoji = str(reaction.emoji)
        if ballot.emoji.key_of(emoji) is None:
            continue
        with contextlib.suppress(discord.HTTPException):
            async for user in reaction.users():
                if user.bot or user.id == me:
                    continue
                people.setdefault(str(user.id), (user.display_name, []))[1].append(emoji)
    return people
