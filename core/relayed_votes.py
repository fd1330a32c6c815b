"""A person's vote left in the store for the process that runs the debate: written, in one shape,
by the process the person reached (`DebateManager.cast_vote`, or a debate's old owner woken after a
takeover: `DebateHandle`), read by the owner, which casts it as if it had reached it
(`DebateManager`). A Stop left the same way is `core.stopping`'s.

A reaction on a vote card is left as the reaction itself (`RelayedReaction`), not as the vote it
makes: which vote a person's reactions cast takes every change of them, in one place, and Slack hands
one person's reactions to whichever worker it likes. The owner's card ballot applies it (the front
end's sink takes it: `relayed_reaction`). A process that may have missed reactions on cards (its
gateway or socket came back with a new session) asks the owner to read them again (`CardsToRead`)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass

REACTION = "reaction"
READ_CARDS = "read_cards"


@dataclass(frozen=True)
class RelayedVote:
    vote_id: str
    voter_id: str
    choice: str | None  # None: the person withdrew their vote
    voter_name: str | None = None

    def payload(self) -> str:
        """The vote as the store keeps it (`Store.post_vote`)."""
        return json.dumps(asdict(self))

    @classmethod
    def read(cls, left: Mapping[str, object]) -> RelayedVote:
        """The vote from what the store gave back (`Store.take_votes`, parsed)."""
        choice, name = left.get("choice"), left.get("voter_name")
        return cls(
            vote_id=str(left["vote_id"]),
            voter_id=str(left["voter_id"]),
            choice=None if choice is None else str(choice),
            voter_name=None if name is None else str(name),
        )


@dataclass(frozen=True)
class RelayedReaction:
    vote_id: str
    person: str
    key: str  # the option the reaction is for
    added: bool  # False: taken back
    at: float | None = None  # when it was made, if the platform says (reactions count in that order)
    name: str | None = None  # the person's display name, if the platform says

    def payload(self) -> str:
        """The reaction as the store keeps it (`Store.post_vote`)."""
        return json.dumps({"kind": REACTION, **asdict(self)})

    @classmethod
    def read(cls, left: Mapping[str, object]) -> RelayedReaction | None:
        """The reaction, when what the store gave back is one (None: a vote or a Stop)."""
        if left.get("kind") != REACTION:
            return None
        at, name = left.get("at"), left.get("name")
        return cls(
            vote_id=str(left["vote_id"]),
            person=str(left["person"]),
            key=str(left["key"]),
            added=bool(left["added"]),
            at=None if at is None else float(str(at)),
            name=None if name is None else str(name),
        )


@dataclass(frozen=True)
class CardsToRead:
    """The debate's open vote cards to be read again by its owner: reaction events on them may have
    reached another process's dropped connection, and the platform does not send them again in time."""

    def payload(self) -> str:
        return json.dumps({"kind": READ_CARDS})

    @staticmethod
    def asked(left: Mapping[str, object]) -> bool:
        return left.get("kind") == READ_CARDS


ReactionTaker = Callable[[RelayedReaction], Awaitable[None]]
"""The front end's way to apply a reaction relayed to the debate's owner (its sink's `relayed_reaction`)."""

CardsReader = Callable[[], Awaitable[None]]
"""The front end's way to read a debate's open vote cards again (its sink's `read_cards_again`)."""
