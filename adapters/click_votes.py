"""A click on a vote card's button, the same rule on Discord and Slack (`ballot: buttons`): that
person's vote, one each, changed by a click on another option, confirmed to them privately in the
same words. Run here when this process runs the debate; else passed on to whichever does, through
the store (`RemoteReactions.cast`, waited out while the store is away). Each front end finds the
debate and the vote from its click, and passes how its text is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from adapters.remote_votes import RemoteReactions
from core.errors import BallotClosedError, BallotError, StoreError
from core.models import VoteOption
from core.outlasting import Waiting
from core.session import DebateHandle

CLOSED = "Voting on this card has closed."
ENDED = "This debate has ended."
UNAVAILABLE = "Your vote could not be passed on just now; try again in a moment."

Escape = Callable[[str], str]


def _label(options: Sequence[VoteOption], key: str, escape: Escape) -> str:
    option = next((o for o in options if o.key == key), None)
    return f"{option.emoji} {escape(option.label)}".strip() if option is not None else escape(key)


async def vote_here(
    handle: DebateHandle, vote_id: str, person: str, key: str, name: str | None, escape: Escape = str
) -> str:
    """A click on a card of a debate this process runs: the person's vote; what to tell them."""
    ballot = handle.state.ballots.get(vote_id)
    options = ballot.options if ballot is not None else ()
    before = ballot.human_votes.get(person) if ballot is not None else None
    if before is not None and before.choice == key and handle.human_vote_open(vote_id):
        return f"You already voted {_label(options, key, escape)}."
    try:
        await handle.cast_human_vote(vote_id, person, key, voter_name=name)
    except BallotClosedError:
        return CLOSED
    except BallotError as exc:
        return escape(str(exc))
    changed = "You changed your vote to" if before is not None else "You voted"
    return f"{changed} {_label(options, key, escape)}."


async def vote_elsewhere(
    remote: RemoteReactions,
    debate_id: str,
    vote_id: str,
    person: str,
    key: str,
    name: str | None,
    *,
    waiting: Waiting | None = None,
    escape: Escape = str,
) -> str:
    """A click on a card of a debate another process runs: the vote goes to it through the store
    (`waiting` tells the person once that it waits for the database). A card carries its buttons only
    while its window is open, so the click is taken as a vote."""
    try:
        if not await remote.cast(debate_id, vote_id, person, key, name, waiting):
            return ENDED
        options = await remote.cards.options(debate_id, vote_id) or ()
    except StoreError:  # the store did not answer (a failed cast says so in the log)
        return UNAVAILABLE
    return f"You voted {_label(options, key, escape)}."
