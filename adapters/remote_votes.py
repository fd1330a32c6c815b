"""Reactions on the cards of debates another Rostra process runs (several processes, one database).

A reaction reaches whichever process the platform chose (the shard holding the server, the Slack
worker the load balancer picked); after a failover the debate may run elsewhere. Such a process
finds the card through the store (`adapters.stored_cards`) and hands the reaction itself on to the
owner through the store (`DebateManager.relay_reaction`), whose card ballot applies it by the one
rule (`adapters.reaction_ballot`): a person's reactions may reach different processes, and only
where all of them meet can they make the vote the card shows. The owner decides whether it counts
(a window must be open). Each platform maps its reactions to option keys and finds its cards.
Clicks are votes already: they are handed on as such (`cast`). A process whose connection came back
with a new session may have missed reactions on any card whose events come to it: it asks the
owners of those debates to read their cards again (`cards_missed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Collection

from adapters.host import Host
from adapters.stored_cards import CardOf, StoredCard, StoredCards
from core.errors import BallotError, StoreError
from core.outlasting import Waiting, outlasting
from core.relayed_votes import RelayedReaction

log = logging.getLogger(__name__)

KeyOf = Callable[[StoredCard, str], str | None]
"""(the card, a reaction as the platform names it) → the option key it votes for, or None."""


class RemoteReactions:
    def __init__(self, rt: Host, platform: str, card_of: CardOf, key_of: KeyOf) -> None:
        self.rt = rt
        self._platform, self._card_of, self._key_of = platform, card_of, key_of
        self._cards: StoredCards | None = None
        self._order = asyncio.Lock()

    @property
    def cards(self) -> StoredCards:
        if self._cards is None:  # the runtime's store is open by the time votes arrive
            self._cards = StoredCards(self.rt.store, self._platform, self._card_of)
        return self._cards

    async def reaction(
        self,
        channel: str,
        message: str,
        person: str,
        reaction: str,
        *,
        added: bool,
        name: str | None,
        at: float | None = None,
    ) -> None:
        """A person's reaction on a message that is no card of a debate running here (`at`: when it
        was made, if the platform says)."""
        async with self._order:  # events are handled concurrently: pass changes on in their order
            try:
                card = await self.cards.find(channel, message)
            except StoreError as exc:
                log.warning("could not look up vote card %s in the store: %s", message, exc)
                return
            key = self._key_of(card, reaction) if card is not None else None
            if card is None or key is None:
                return
            relayed = RelayedReaction(card.vote_id, person, key, added, at, name)
            manager, debate_id = self.rt.manager, card.debate_id
            with contextlib.suppress(StoreError):  # said in the log; the platform does not resend
                await self._handed_on(debate_id, lambda: manager.relay_reaction(debate_id, relayed))

    async def cards_missed(self, scopes: Collection[str] | None) -> None:
        """Reaction events on the way to this process may be lost (its gateway or socket came back
        with a new session): each debate another process runs on this platform, in `scopes` (the
        servers or workspaces whose events come here; None: any), has its owner read its open cards
        again. (The debates run here read theirs themselves.)"""
        manager = self.rt.manager
        try:
            running = await self.rt.store.debates_with_status("running")
        except StoreError as exc:
            log.warning("could not ask the other processes to read their vote cards again: %s", exc)
            return
        for record in running:
            binding = record.binding
            if binding.platform != self._platform or manager.get(record.id) is not None:
                continue
            if scopes is None or binding.scope in scopes:
                ask = functools.partial(manager.ask_cards_read, record.id)
                with contextlib.suppress(StoreError):  # said in the log
                    await self._handed_on(record.id, ask)

    async def cast(
        self,
        debate_id: str,
        vote_id: str,
        person: str,
        choice: str | None,
        name: str | None,
        waiting: Waiting | None = None,
    ) -> bool:
        """Hand the vote to whichever process runs the debate; False when it has ended. `waiting`
        tells the person, once, that their vote waits for the database."""
        manager = self.rt.manager
        return await self._handed_on(
            debate_id, lambda: manager.cast_vote(debate_id, vote_id, person, choice, voter_name=name), waiting
        )

    async def _handed_on(
        self, debate_id: str, hand_on: Callable[[], Awaitable[None]], waiting: Waiting | None = None
    ) -> bool:
        """Whether a vote or reaction was left for the owner (False: the debate has ended). While the
        store is away it waits for it (`core.outlasting`), the person's later reactions behind it: a
        reaction's event is not sent again, so one refused here would be lost."""
        try:
            await outlasting(hand_on, self.rt.manager.settings.storage, waiting)
        except BallotError as exc:
            log.debug("debate %s: a vote refused: %s", debate_id, exc)
            return False
        except StoreError as exc:
            log.warning("debate %s: could not pass a vote on through the store: %s", debate_id, exc)
            raise
        return True
