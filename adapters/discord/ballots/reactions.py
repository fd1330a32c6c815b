"""People's reactions on a Discord vote card, as votes: Discord's emoji → the card's option keys.

The rule of which reactions make a person's vote is the shared one (`adapters/reaction_ballot.py`),
the wiring to the debate too (`adapters/card_votes.py`); this maps Discord's emoji (with or without
the variation selector) to option keys. The bot's own reactions (the ballot itself) and other bots'
never get here: the listener drops them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from adapters.card_votes import CardVotes
from core.events import VoteCast
from core.models import VoteOption
from core.session import DebateHandle

_VARIATION_SELECTOR = "\ufe0f"


def _norm(emoji: str) -> str:
    return emoji.replace(_VARIATION_SELECTOR, "")


def is_person(user_id: int, *, is_bot: bool, me: int | None) -> bool:
    """Whether a reaction is a person's: the bot's own (the ballot) and other bots' never vote."""
    return user_id != me and not is_bot


class EmojiKeys:
    """A card's options by their emoji."""

    def __init__(self, options: Iterable[VoteOption]) -> None:
        self._keys = {_norm(o.emoji): o.key for o in options}

    def key_of(self, emoji: str) -> str | None:
        return self._keys.get(_norm(emoji))


class CardBallot(CardVotes):
    """A vote card's reactions wired to the running debate."""

    def __init__(
        self, vote_id: str, options: tuple[VoteOption, ...], handle: DebateHandle | None = None
    ) -> None:
        super().__init__(vote_id, [o.key for o in options], handle)
        self.emoji = EmojiKeys(options)

    async def reacted(self, person: str, name: str, emoji: str) -> None:
        await self.reaction(person, self.emoji.key_of(emoji), added=True, name=name)

    async def unreacted(self, person: str, emoji: str) -> None:
        await self.reaction(person, self.emoji.key_of(emoji), added=False)

    def restore_card(
        self,
        people: Mapping[str, tuple[str, Sequence[str]]],
        voted: Mapping[str, str],
        window: tuple[VoteOption, ...] | None,
    ) -> None:
        """The card after a restart: person → (name, emojis they react with), their stored votes,
        and the options open to people if a window had opened."""
        on_card = {p: [k for e in emojis if (k := self.emoji.key_of(e))] for p, (_, emojis) in people.items()}
        names = {p: name for p, (name, _) in people.items()}
        self.restore(on_card, names, voted, None if window is None else [o.key for o in window])

    async def card_read_again(
        self, people: Mapping[str, tuple[str, Sequence[str]]], read_when: Mapping[str, VoteCast]
    ) -> None:
        """The card as read again (person → (name, emojis they react with)): see `CardVotes.card_read`."""
        on_card = {p: [k for e in emojis if (k := self.emoji.key_of(e))] for p, (_, emojis) in people.items()}
        await self.card_read(on_card, {p: name for p, (name, _) in people.items()}, read_when)

    async def window_opened_for(self, options: tuple[VoteOption, ...]) -> None:
        """People may vote on `options` now: count the reactions already on the card for them.

        Also after a restart, when the window reopens: the debate then already holds the votes
        cast before, and the card (read at the restart) may show changes made while the bot was away."""
        await self.window_opened([o.key for o in options], complete=True)


class CardRegistry:
    """Open vote cards by message id, so a reaction finds its ballot."""

    def __init__(self) -> None:
        self._cards: dict[int, CardBallot] = {}

    def track(self, message_id: int, card: CardBallot) -> None:
        self._cards[message_id] = card

    def untrack(self, message_id: int) -> None:
        self._cards.pop(message_id, None)

    def get(self, message_id: int) -> CardBallot | None:
        return self._cards.get(message_id)
