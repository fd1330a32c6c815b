"""People's reactions on a vote card, as votes.

One vote per person: a newer reaction replaces the older; removing the reaction that is their
vote withdraws it. Reactions made before the human window opens are remembered and cast when it
opens. A window may offer only some of the card's options (a tie offers the tied ones): a reaction
on another option is remembered but is no vote. The bot's own reactions (the ballot itself) never
get here: the listener drops them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from core.errors import BallotError
from core.events import VoteCast
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
        self._open = {o.key for o in options}
        self._reacted: dict[str, list[str]] = {}
        """person → the options they have reacted with and not taken back, oldest first."""
        self._choice: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def choice_of(self, emoji: str) -> str | None:
        return self._keys.get(_norm(emoji))

    def added(self, person: str, emoji: str, name: str) -> str | None:
        """A reaction came in: the person's vote now, or None when it is no vote (not an option, or
        an option not open to people)."""
        choice = self.choice_of(emoji)
        if choice is None:
            return None
        reacted = self._reacted.setdefault(person, [])
        if choice in reacted:
            reacted.remove(choice)
        reacted.append(choice)
        self._names[person] = name
        if choice not in self._open:
            return None
        self._choice[person] = choice
        return choice

    def removed(self, person: str, emoji: str) -> bool:
        """A reaction went away: True when it was the person's vote (now withdrawn)."""
        choice = self.choice_of(emoji)
        if choice is None:
            return False
        reacted = self._reacted.get(person, [])
        if choice in reacted:
            reacted.remove(choice)
        if self._choice.get(person) != choice:
            return False
        del self._choice[person]
        return True

    def narrow(self, keys: Iterable[str]) -> None:
        """Only `keys` are open to people now. A vote on another option falls back to the person's
        newest reaction on an open one, or to no vote."""
        self._open = set(keys)
        for person, reacted in self._reacted.items():
            if self._choice.get(person) in self._open:
                continue
            on_open = [c for c in reacted if c in self._open]
            if on_open:
                self._choice[person] = on_open[-1]
            else:
                self._choice.pop(person, None)

    def restore(self, person: str, name: str, emojis: Iterable[str], voted: str | None) -> None:
        """What the card shows for one person after a restart: the order of their reactions is
        lost, so their stored vote (`voted`) stays their vote while its reaction is still there;
        otherwise their reaction on the earliest open option counts."""
        choices = [c for c in (self.choice_of(e) for e in emojis) if c is not None]
        if not choices:
            return
        if voted in choices:
            choices.remove(voted)
            choices.append(voted)
        else:
            choices.reverse()
        self._reacted[person] = choices
        self._names[person] = name
        on_open = [c for c in choices if c in self._open]
        if on_open:
            self._choice[person] = on_open[-1]

    def current(self) -> dict[str, tuple[str, str]]:
        """person → (choice, display name)."""
        return {p: (c, self._names.get(p, p)) for p, c in self._choice.items()}


class CardBallot:
    """A vote card's reactions wired to the running debate (votes count only while a window is open).

    Until the debate's handle is bound (a debate resuming after a restart), reactions are only
    remembered; `sync` counts them once it is."""

    def __init__(
        self, vote_id: str, options: tuple[VoteOption, ...], handle: DebateHandle | None = None
    ) -> None:
        self.vote_id = vote_id
        self.ballot = ReactionBallot(options)
        self._handle = handle

    def bind(self, handle: DebateHandle) -> None:
        self._handle = handle

    @property
    def is_open(self) -> bool:
        return self._handle is not None and self._handle.human_vote_open(self.vote_id)

    async def reacted(self, person: str, name: str, emoji: str) -> None:
        choice = self.ballot.added(person, emoji, name)
        if choice is not None and self.is_open:
            await self._cast(person, choice, name)

    async def unreacted(self, person: str, emoji: str) -> None:
        if self.ballot.removed(person, emoji) and self.is_open:
            await self._withdraw(person)

    def restore(
        self,
        people: Mapping[str, tuple[str, Sequence[str]]],
        voted: Mapping[str, str],
        window: tuple[VoteOption, ...] | None,
    ) -> None:
        """The card after a restart: person → (name, emojis they react with), their stored votes,
        and the options open to people if a window had opened."""
        if window is not None:
            self.ballot.narrow(o.key for o in window)
        for person, (name, emojis) in people.items():
            self.ballot.restore(person, name, emojis, voted.get(person))

    async def window_opened(self, options: tuple[VoteOption, ...]) -> None:
        """People may vote on `options` now: count the reactions already on the card for them.

        Also after a restart, when the window reopens: the debate then already holds the votes
        cast before, and the card may show changes made while the bot was away."""
        self.ballot.narrow(o.key for o in options)
        await self.sync()

    async def sync(self) -> None:
        """Make the debate's record of people's votes match the card (while the window is open)."""
        if not self.is_open:
            return
        now = self.ballot.current()
        for person, (choice, name) in now.items():
            await self._cast(person, choice, name)
        for person in list(self.recorded()):
            if person not in now:
                await self._withdraw(person)

    def recorded(self) -> Mapping[str, VoteCast]:
        """People's votes the debate holds for this ballot."""
        ballot = self._handle.state.ballots.get(self.vote_id) if self._handle is not None else None
        return ballot.human_votes if ballot is not None else {}

    async def _cast(self, person: str, choice: str, name: str) -> None:
        if self._handle is None:
            return
        try:
            await self._handle.cast_human_vote(self.vote_id, person, choice, voter_name=name)
        except BallotError as exc:
            log.debug("vote %s: %s's vote refused: %s", self.vote_id, person, exc)

    async def _withdraw(self, person: str) -> None:
        if self._handle is None:
            return
        try:
            await self._handle.withdraw_human_vote(self.vote_id, person)
        except BallotError as exc:
            log.debug("vote %s: withdrawal by %s refused: %s", self.vote_id, person, exc)


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
