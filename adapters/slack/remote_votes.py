"""Votes on the cards of debates another Rostra process runs (Slack HTTP workers behind one URL).

Slack sends each event and click to whichever worker its load balancer picked, which need not be
the one running the debate. Such a worker finds the card through the store (`adapters.stored_cards`),
keeps each person's reactions as the owner would (the newest reaction on an option is their vote;
taking it back withdraws it) and hands every change to the owner through the store
(`DebateManager.cast_vote`). The owner decides whether it counts (a window must be open); when a
window opens the owner also reads the card itself, so reactions made earlier count there too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping

from adapters.host import Host
from adapters.slack.ballot import ReactionLedger
from adapters.slack.emoji import option_reactions
from adapters.slack.ops import vote_key
from adapters.stored_cards import StoredCard, StoredCards
from core.errors import BallotError, StoreError

log = logging.getLogger(__name__)

PLATFORM = "slack"
TS_PREFIX = "ts:" + vote_key("")


def card_of(values: Mapping[str, str], ts: str) -> str | None:
    """The vote whose card was posted at `ts`, from the sender's recorded `ts:vote:<id>` values."""
    for key, value in values.items():
        if key.startswith(TS_PREFIX) and value == ts:
            return key.removeprefix(TS_PREFIX)
    return None


class RemoteVotes:
    def __init__(self, rt: Host) -> None:
        self.rt = rt
        self._cards: StoredCards | None = None
        self._ledgers: dict[tuple[str, str], ReactionLedger] = {}
        self._order = asyncio.Lock()

    @property
    def cards(self) -> StoredCards:
        if self._cards is None:  # the runtime's store is open by the time votes arrive
            self._cards = StoredCards(self.rt.store, PLATFORM, card_of)
        return self._cards

    async def reaction(self, channel: str, ts: str, user: str, name: str, *, added: bool) -> None:
        """A reaction on a message that is no card of a debate running here."""
        async with self._order:  # events are handled concurrently: pass changes on in their order
            try:
                card = await self.cards.find(channel, ts)
            except StoreError as exc:
                log.warning("could not look up vote card %s in the store: %s", ts, exc)
                return
            if card is None:
                return
            ledger = self._ledger(card)
            before = ledger.choice(user)
            changed = ledger.added(user, name) if added else ledger.removed(user, name)
            after = ledger.choice(user)
            if changed and before != after:
                with contextlib.suppress(StoreError):  # said in the log; Slack does not resend
                    await self.cast(card.debate_id, card.vote_id, user, after, user)

    async def cast(
        self, debate_id: str, vote_id: str, user: str, choice: str | None, name: str | None
    ) -> bool:
        """Hand the vote to whichever process runs the debate; False when it has ended."""
        try:
            await self.rt.manager.cast_vote(debate_id, vote_id, user, choice, voter_name=name)
        except BallotError as exc:
            log.debug("debate %s: a vote by %s refused: %s", debate_id, user, exc)
            return False
        except StoreError as exc:
            log.warning("debate %s: could not pass a vote on through the store: %s", debate_id, exc)
            raise
        return True

    def _ledger(self, card: StoredCard) -> ReactionLedger:
        key = (card.debate_id, card.vote_id)
        ledger = self._ledgers.get(key)
        if ledger is None:
            if len(self._ledgers) >= 256:
                self._ledgers.pop(next(iter(self._ledgers)))
            ledger = self._ledgers[key] = ReactionLedger(option_reactions(card.options))
        return ledger
