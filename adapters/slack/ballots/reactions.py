"""People's votes in one debate: reactions on its vote cards → the debate handle.

Slack reports reactions by name (`+1::skin-tone-2`, `thumbsup`): this maps them to the cards' option
keys and leaves the rule (`adapters/reaction_ballot.py`) and the wiring to the debate
(`adapters/card_votes.py`) to the shared code. Reactions are recorded from the moment a card is
posted; they count only while the debate has a human window open for that vote. When a window opens
and as it closes, what is on the card then (`reactions.get`) is taken as the truth, so reactions
added early, or whose events Slack sends late or never, count too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from adapters.card_votes import CardVotes
from adapters.slack.delivery.failures import NETWORK_ERRORS
from adapters.slack.inbound.people import bot_users_of
from adapters.slack.render.emoji import normalise_reaction
from core.events import VoteCast
from core.session import DebateHandle

log = logging.getLogger(__name__)

LAST_LOOK_WAIT = 10.0
"""Seconds a closing window waits for its card to be read (Slack slower: the votes seen so far count)."""

CardReader = Callable[[str], Awaitable[Mapping[str, list[str]] | None]]
"""A card's reactions read from Slack by its ts: user → reaction names (None: Slack could not say)."""


async def read_card(
    client: AsyncWebClient, channel: str, ts: str, *, what: str, bot_user_id: str | None = None
) -> dict[str, list[str]] | None:
    """Who reacts with what on the card now (`reactions.get`): user → reaction names, other apps'
    bot users left out (their reactions are no votes); None when Slack could not say."""
    try:
        response = await client.reactions_get(channel=channel, timestamp=ts, full=True)
    except NETWORK_ERRORS as exc:
        log.warning("%s: could not read the reactions on card %s: %r", what, ts, exc)
        return None
    on_card: dict[str, list[str]] = {}
    message: Any = response.get("message") or {}
    for reaction in message.get("reactions") or []:
        for user in reaction.get("users") or []:
            on_card.setdefault(str(user), []).append(str(reaction.get("name")))
    on_card.pop(bot_user_id or "", None)  # the ballot's own seeds
    bots = bot_users_of(client)
    return {user: names for user, names in on_card.items() if not await bots.is_bot(user)}


class ReactionKeys:
    """A card's options by the reaction names that vote for them."""

    def __init__(self, reactions: Mapping[str, str]) -> None:
        """`reactions`: option key → the reaction name that votes for it."""
        self.keys = list(reactions)
        self._key_of = {name: key for key, name in reactions.items()}

    def key_of(self, reaction: str) -> str | None:
        return self._key_of.get(normalise_reaction(reaction))

    def on_card(self, people: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
        return {p: [k for n in names if (k := self.key_of(n))] for p, names in people.items()}


class HumanVotes:
    def __init__(self, *, bot_user_id: str | None) -> None:
        self._bot_user_id = bot_user_id
        self._handle: DebateHandle | None = None
        self._cards: dict[str, tuple[CardVotes, ReactionKeys]] = {}
        self._vote_of_card: dict[str, str] = {}

    def attach(self, handle: DebateHandle) -> None:
        self._handle = handle
        for card, _ in self._cards.values():
            card.bind(handle)

    def card_posted(self, vote_id: str, ts: str, reactions: Mapping[str, str]) -> None:
        keys = ReactionKeys(reactions)
        self._cards[vote_id] = (CardVotes(vote_id, keys.keys, self._handle), keys)
        self._vote_of_card[ts] = vote_id

    def card(self, vote_id: str) -> CardVotes | None:
        found = self._cards.get(vote_id)
        return found[0] if found is not None else None

    def vote_on(self, ts: str) -> str | None:
        return self._vote_of_card.get(ts)

    async def reaction(self, ts: str, user: str, name: str, *, added: bool, at: float | None) -> None:
        vote_id = self._vote_of_card.get(ts)
        if vote_id is None or user == self._bot_user_id:
            return
        card, keys = self._cards[vote_id]
        await card.reaction(user, keys.key_of(name), added=added, at=at)

    async def open_cards_read_again(self, read: CardReader) -> None:
        """Each card whose window is open read again (`read(ts)`: user → reaction names, None when
        Slack could not say) and taken as it stands: reaction events may have been missed (Socket
        Mode reconnected; Slack sends them again only a minute or more later, after the window)."""
        for ts, vote_id in list(self._vote_of_card.items()):
            await self._read_again(ts, vote_id, read)

    async def card_read_again(self, vote_id: str, read: CardReader, *, within: float) -> None:
        """One vote's card read again, as `open_cards_read_again` reads each; a read slower than
        `within` seconds is given up (the votes seen so far stand)."""
        for ts, vote in list(self._vote_of_card.items()):
            if vote == vote_id:
                await self._read_again(ts, vote_id, read, within=within)

    async def _read_again(
        self, ts: str, vote_id: str, read: CardReader, *, within: float | None = None
    ) -> None:
        card, keys = self._cards[vote_id]
        if not card.is_open:
            return
        read_when = dict(card.recorded())
        try:
            on_card = await asyncio.wait_for(read(ts), within)
        except TimeoutError:
            log.warning("vote %s: Slack did not say what is on its card within %.0f s", vote_id, within)
            return
        if on_card is not None:
            people = keys.on_card({u: n for u, n in on_card.items() if u != self._bot_user_id})
            await card.card_read(people, {}, read_when)

    def recorded(self, vote_id: str) -> dict[str, VoteCast]:
        """People's votes the debate holds for a card now (taken before the card is read)."""
        found = self._cards.get(vote_id)
        return dict(found[0].recorded()) if found is not None else {}

    async def window_opened(
        self,
        vote_id: str,
        options: Iterable[str],
        on_card: Mapping[str, Iterable[str]] | None,
        *,
        read_when: Mapping[str, VoteCast] | None = None,
    ) -> None:
        """People may now vote for `options`: count what they have on the card now (the bot's own
        reactions excluded), and take back a recorded vote whose reaction is no longer there.
        Without `on_card` (Slack could not say), the reactions seen so far count. `read_when`: the
        votes on record when the card was read; votes recorded since stand."""
        found = self._cards.get(vote_id)
        if found is None:
            return
        card, keys = found
        people = (
            None
            if on_card is None
            else keys.on_card({u: n for u, n in on_card.items() if u != self._bot_user_id})
        )
        await card.window_opened(options, people, read_when=read_when)
