"""What other processes left in the store for a debate run here, applied by its owner in the order
left: a Stop, a person's vote, a reaction on a card, an ask to read the cards again
(`core.relayed_votes`, `core.stopping`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

from core.errors import BallotError
from core.relayed_votes import CardsToRead, RelayedReaction, RelayedVote
from core.session import DebateSession
from core.stopping import stop_asked

log = logging.getLogger(__name__)

VoteCaster = Callable[[RelayedVote], Awaitable[None]]
"""Casts (or withdraws) a person's vote in the debate, as if it had reached this process."""


async def apply_left(session: DebateSession, payload: str, cast: VoteCaster) -> None:
    """One thing left for the debate, applied (a vote the debate refuses is said in the log)."""
    left = json.loads(payload)
    if (stop := stop_asked(left)) is not None:  # a Stop asked through another process
        session.request_stop(stop)
    elif (reaction := RelayedReaction.read(left)) is not None:  # for the card's ballot
        await session.take_reaction(reaction)
    elif CardsToRead.asked(left):  # reactions on its cards may have been missed elsewhere
        await session.read_cards_again()
    else:
        try:
            await cast(RelayedVote.read(left))
        except BallotError as exc:  # the window closed meanwhile, say: as for a vote cast here
            log.info("debate %s: a vote from another process was refused: %s", session.debate_id, exc)
