"""People's reactions on a vote card, as votes.

One vote per person: a newer reaction replaces the older; removing the reaction that is their
vote withdraws it. Reactions made before the human window opens are remembered and cast when it
opens. The bot's own reactions (the ballot itself) never get here: the listener drops them.
"""

from __future__ import annotations

import logging

from core.errors import BallotError
from core.models import VoteOption
from core.session import DebateHandle

log = logging.getLogger(__name__)

_VARIATION_SELECTOR = "\ufe0f"


def _norm(emoji: str) -> str:
    return emoji.replace(_VARIATION_SELECTOR, "")


class ReactionBallot:
    """Who currently votes for what on one card (pure bookkeeping)."""

    def __init__(self, options: tuple[VoteOption, ...]) -> None:
        self._keys = {_norm(o.emoji): o.key for o in options}
        self._choice: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def choice_of(self, emoji: str) -> str | None:
        return self._keys.get(_norm(emoji))

    def added(self, person: str, emoji: str, name: str) -> str | None:
        """A reaction came in: the person's choice now, or None for an emoji that is not an option."""
        choice = self.choice_of(emoji)
        if choice is not None:
            self._choice[person] = choice
            self._names[person] = name
        return choice

    def removed(self, person: str, emoji: str) -> bool:
        """A reaction went away: True when it was the person's vote (now withdrawn)."""
        choice = self.choice_of(emoji)
        if choice is None or self._choice.get(person) != choice:
            return False
        del self._choice[person]
        return True

    def current(self) -> dict[str, tuple[str, str]]:
        """person → (choice, display name)."""
        return {p: (c, self._names.get(p, p)) for p, c in self._choice.items()}


class CardBallot:
    """A vote card's reactions wired to the running debate (votes count only while a window is open)."""

    def __init__(self, handle: DebateHandle, vote_id: str, options: tuple[VoteOption, ...]) -> None:
        self.handle = handle
        self.vote_id = vote_id
        self.ballot = ReactionBallot(options)

    async def reacted(self, person: str, name: str, emoji: str) -> None:
        choice = self.ballot.added(person, emoji, name)
        if choice is not None and self.handle.human_vote_open(self.vote_id):
            await self._cast(person, choice, name)

    async def unreacted(self, person: str, emoji: str) -> None:
        if self.ballot.removed(person, emoji) and self.handle.human_vote_open(self.vote_id):
            try:
                await self.handle.withdraw_human_vote(self.vote_id, person)
            except BallotError as exc:
                log.debug("vote %s: withdrawal by %s refused: %s", self.vote_id, person, exc)

    async def window_opened(self) -> None:
        """Count the reactions people made before the window opened."""
        for person, (choice, name) in self.ballot.current().items():
            await self._cast(person, choice, name)

    async def _cast(self, person: str, choice: str, name: str) -> None:
        try:
            await self.handle.cast_human_vote(self.vote_id, person, choice, voter_name=name)
        except BallotError as exc:
            log.debug("vote %s: %s's vote refused: %s", self.vote_id, person, exc)


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
