"""Vote cards of debates another Rostra process runs, found through the shared store.

Several processes may share one database (Discord shards, Slack HTTP workers behind one URL), and a
person's reaction or click reaches whichever process the platform chose, not necessarily the one
running the debate. That process finds the card here: the running debate bound to the channel (one
query on the debates table), the card among the debate's recorded message ids (binding values), and
the card's options from its `VotingStarted` event. A found card is remembered, so later votes on it
cost no reads; the reaction (or click) itself goes through `DebateManager.relay_reaction` (or
`cast_vote`), which leaves it in the store for the owner (picked up at once on Postgres, within
`storage.poll_seconds` on SQLite).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from core.events import VotingStarted
from core.models import VoteOption
from core.ports import Store

log = logging.getLogger(__name__)

CardOf = Callable[[Mapping[str, str], str], str | None]
"""(the debate's binding values, a message id) → the vote id of the card that message is, or None."""

REMEMBERED = 256


@dataclass(frozen=True)
class StoredCard:
    debate_id: str
    vote_id: str
    options: tuple[VoteOption, ...]

    def option(self, key: str) -> VoteOption | None:
        return next((o for o in self.options if o.key == key), None)


class StoredCards:
    """Finds vote cards of running debates by (channel, message) through the store; remembers them."""

    def __init__(self, store: Store, platform: str, card_of: CardOf) -> None:
        self._store = store
        self._platform = platform
        self._card_of = card_of
        self._found: OrderedDict[tuple[str, str], StoredCard] = OrderedDict()
        self._options: dict[tuple[str, str], tuple[VoteOption, ...]] = {}

    async def running_in(self, channel: str) -> str | None:
        """The id of the debate running in `channel` on this platform (any process), or None."""
        for record in await self._store.debates_with_status("running"):
            if record.binding.platform == self._platform and record.binding.channel == channel:
                return record.id
        return None

    async def find(self, channel: str, message: str) -> StoredCard | None:
        """The vote card `message` in `channel`, or None when it is no card of a running debate."""
        found = self._found.get((channel, message))
        if found is not None:
            self._found.move_to_end((channel, message))
            return found
        debate_id = await self.running_in(channel)
        if debate_id is None:
            return None
        vote_id = self._card_of(await self._store.binding_values(debate_id), message)
        if vote_id is None:
            return None
        options = await self.options(debate_id, vote_id)
        if options is None:
            return None
        card = self._found[(channel, message)] = StoredCard(debate_id, vote_id, options)
        while len(self._found) > REMEMBERED:
            self._found.popitem(last=False)
        return card

    async def options(self, debate_id: str, vote_id: str) -> tuple[VoteOption, ...] | None:
        """The options of a debate's vote, from its stored `VotingStarted` (read once per vote)."""
        known = self._options.get((debate_id, vote_id))
        if known is not None:
            return known
        for event in await self._store.events(debate_id):
            if isinstance(event, VotingStarted) and event.vote_id == vote_id:
                if len(self._options) >= REMEMBERED:
                    self._options.pop(next(iter(self._options)))
                self._options[(debate_id, vote_id)] = event.options
                return event.options
        return None
