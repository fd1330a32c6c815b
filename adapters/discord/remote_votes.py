"""Votes on the cards of debates another Rostra process runs (several processes, one database).

A reaction reaches the process whose shard holds the server, a click the process Discord chose;
after a failover the debate may run elsewhere. Such a vote is kept here as the owner would keep it
(one vote per person: the newest reaction; removing it withdraws the vote) and each change goes
through the store to the owner (`DebateManager.cast_vote`). The owner decides whether it counts (a
window must be open, as for a vote cast there).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from adapters.discord.ballots import ReactionBallot
from adapters.discord.render import vote_slot
from adapters.discord.sender import Sent
from adapters.discord.sink import SLOT_KEY
from adapters.host import Host
from adapters.stored_cards import StoredCard, StoredCards
from core.errors import BallotError, StoreError

log = logging.getLogger(__name__)

PLATFORM = "discord"


def card_of(values: Mapping[str, str], message: str) -> str | None:
    """The vote whose card is `message`, from the recorded slots (`discord.slot.vote:<id>`)."""
    prefix = SLOT_KEY + vote_slot("")
    for key, value in values.items():
        if key.startswith(prefix) and value:
            first = Sent.decode(value.split(",", 1)[0])
            if first is not None and str(first.id) == message:
                return key.removeprefix(prefix)
    return None


class RemoteVotes:
    def __init__(self, rt: Host) -> None:
        self.rt = rt
        self.cards = StoredCards(rt.store, PLATFORM, card_of)
        self._ballots: dict[tuple[str, str], ReactionBallot] = {}
        self._order = asyncio.Lock()

    async def reacted(self, thread_id: int, message_id: int, person: str, name: str, emoji: str) -> None:
        async with self._order:  # events are handled concurrently: pass changes on in their order
            card = await self._card(thread_id, message_id)
            if card is None:
                return
            choice = self._ballot(card).added(person, emoji, name)
            if choice is not None:
                await self.cast(card.debate_id, card.vote_id, person, choice, name)

    async def unreacted(self, thread_id: int, message_id: int, person: str, emoji: str) -> None:
        async with self._order:
            card = await self._card(thread_id, message_id)
            if card is None:
                return
            if self._ballot(card).removed(person, emoji):
                await self.cast(card.debate_id, card.vote_id, person, None, None)

    async def cast(
        self, debate_id: str, vote_id: str, person: str, choice: str | None, name: str | None
    ) -> None:
        """Hand the vote to whichever process runs the debate (BallotError when it has ended)."""
        try:
            await self.rt.manager.cast_vote(debate_id, vote_id, person, choice, voter_name=name)
        except BallotError as exc:
            log.debug("debate %s: a vote by %s refused: %s", debate_id, person, exc)
        except StoreError as exc:
            log.warning("debate %s: could not pass a vote on through the store: %s", debate_id, exc)

    async def _card(self, thread_id: int, message_id: int) -> StoredCard | None:
        try:
            return await self.cards.find(str(thread_id), str(message_id))
        except StoreError as exc:
            log.warning("could not look up vote card %s in the store: %s", message_id, exc)
            return None

    def _ballot(self, card: StoredCard) -> ReactionBallot:
        key = (card.debate_id, card.vote_id)
        ballot = self._ballots.get(key)
        if ballot is None:
            if len(self._ballots) >= 256:
                self._ballots.pop(next(iter(self._ballots)))
            ballot = self._ballots[key] = ReactionBallot(card.options)
        return ballot
