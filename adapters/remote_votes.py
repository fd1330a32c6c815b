"""Reactions on the cards of debates another Rostra process runs (several processes, one database).

A reaction reaches whichever process the platform chose (the shard holding the server, the Slack
worker the load balancer picked); after a failover the debate may run elsewhere. Such a process
finds the card through the store (`adapters.stored_cards`), keeps each person's reactions by the
one rule (`adapters.reaction_ballot`) and hands every change of their vote to the owner through the
store (`DebateManager.cast_vote`). The owner decides whether it counts (a window must be open, as
for a vote cast there). Each platform maps its reactions to option keys and finds its cards.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from adapters.host import Host
from adapters.reaction_ballot import ReactionBallot
from adapters.stored_cards import CardOf, StoredCard, StoredCards
from core.errors import BallotError, StoreError
from core.outlasting import outlasting

log = logging.getLogger(__name__)

REMEMBERED = 256

KeyOf = Callable[[StoredCard, str], str | None]
"""(the card, a reaction as the platform names it) → the option key it votes for, or None."""


class RemoteReactions:
    def __init__(self, rt: Host, platform: str, card_of: CardOf, key_of: KeyOf) -> None:
        self.rt = rt
        self._platform, self._card_of, self._key_of = platform, card_of, key_of
        self._cards: StoredCards | None = None
        self._ballots: dict[tuple[str, str], ReactionBallot] = {}
        self._names: dict[str, str] = {}  # person → the name they last reacted under
        self._order = asyncio.Lock()

    @property
    def cards(self) -> StoredCards:
        if self._cards is None:  # the runtime's store is open by the time votes arrive
            self._cards = StoredCards(self.rt.store, self._platform, self._card_of)
        return self._cards

    async def reaction(
        self, channel: str, message: str, person: str, reaction: str, *, added: bool, name: str | None
    ) -> None:
        """A person's reaction on a message that is no card of a debate running here."""
        async with self._order:  # events are handled concurrently: pass changes on in their order
            try:
                card = await self.cards.find(channel, message)
            except StoreError as exc:
                log.warning("could not look up vote card %s in the store: %s", message, exc)
                return
            if card is None:
                return
            key = self._key_of(card, reaction)
            if key is None:
                return
            ballot = self._ballot(card)
            before = ballot.choice(person)
            changed = ballot.added(person, key) if added else ballot.removed(person, key)
            after = ballot.choice(person)
            if name is not None:
                self._remember(person, name)
            if changed and before != after:
                try:
                    name = self._names.get(person, person)
                    await self.cast(card.debate_id, card.vote_id, person, after, name)
                except StoreError:  # said in the log; the platform does not resend
                    pass

    async def cast(
        self, debate_id: str, vote_id: str, person: str, choice: str | None, name: str | None
    ) -> bool:
        """Hand the vote to whichever process runs the debate; False when it has ended. While the
        store is away the vote waits for it (`core.outlasting`), the person's later reactions behind
        it: a reaction's event is not sent again, so a vote refused here would be lost."""
        manager = self.rt.manager
        try:
            await outlasting(
                lambda: manager.cast_vote(debate_id, vote_id, person, choice, voter_name=name),
                manager.settings.storage,
            )
        except BallotError as exc:
            log.debug("debate %s: a vote by %s refused: %s", debate_id, person, exc)
            return False
        except StoreError as exc:
            log.warning("debate %s: could not pass a vote on through the store: %s", debate_id, exc)
            raise
        return True

    def _remember(self, person: str, name: str) -> None:
        self._names.pop(person, None)
        if len(self._names) >= REMEMBERED * 16:
            self._names.pop(next(iter(self._names)))
        self._names[person] = name

    def _ballot(self, card: StoredCard) -> ReactionBallot:
        key = (card.debate_id, card.vote_id)
        ballot = self._ballots.get(key)
        if ballot is None:
            if len(self._ballots) >= REMEMBERED:
                self._ballots.pop(next(iter(self._ballots)))
            ballot = self._ballots[key] = ReactionBallot([o.key for o in card.options])
        return ballot
