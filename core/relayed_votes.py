"""A person's vote left in the store for the process that runs the debate: written, in one shape,
by the process the person reached (`DebateManager.cast_vote`, or a debate's old owner woken after a
takeover: `DebateHandle`), read by the owner, which casts it as if it had reached it
(`DebateManager`). A Stop left the same way is `core.stopping`'s."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass


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
