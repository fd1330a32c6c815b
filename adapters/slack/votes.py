"""People's votes in one debate: reactions on its vote cards → the debate handle.

Reactions are recorded from the moment a card is posted; they count only while the debate has a
human window open for that vote. When a window opens, what is on the card then (`reactions.get`)
is taken as the truth, so reactions added early, or missed, count too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping

from adapters.slack.ballot import ReactionLedger
from core.errors import BallotError
from core.session import DebateHandle

log = logging.getLogger(__name__)


class HumanVotes:
    def __init__(self, *, bot_user_id: str | None) -> None:
        self._bot_user_id = bot_user_id
        self._handle: DebateHandle | None = None
        self._ledgers: dict[str, ReactionLedger] = {}
        self._vote_of_card: dict[str, str] = {}
        self._lock = asyncio.Lock()

    def attach(self, handle: DebateHandle) -> None:
        self._handle = handle

    def card_posted(self, vote_id: str, ts: str, reactions: Mapping[str, str]) -> None:
        self._ledgers[vote_id] = ReactionLedger(reactions)
        self._vote_of_card[ts] = vote_id

    def vote_on(self, ts: str) -> str | None:
        return self._vote_of_card.get(ts)

    async def reaction(self, ts: str, user: str, name: str, *, added: bool) -> None:
        vote_id = self._vote_of_card.get(ts)
        if vote_id is None or user == self._bot_user_id:
            return
        async with self._lock:
            ledger = self._ledgers[vote_id]
            before = ledger.choice(user)
            changed = ledger.added(user, name) if added else ledger.removed(user, name)
            after = ledger.choice(user)
            if changed and before != after and self._open(vote_id):
                await self._apply(vote_id, user, after)

    async def window_opened(
        self, vote_id: str, options: Iterable[str], on_card: Mapping[str, Iterable[str]] | None
    ) -> None:
        """People may now vote for `options`: count what they have on the card now (the bot's own
        reactions excluded), and take back a recorded vote whose reaction is no longer there.
        Without `on_card` (Slack could not say), the reactions seen so far count."""
        ledger = self._ledgers.get(vote_id)
        if ledger is None:
            return
        async with self._lock:
            ledger.open_only(options)
            if on_card is not None:
                ledger.reconcile({u: list(n) for u, n in on_card.items() if u != self._bot_user_id})
            choices = ledger.choices()
            for user in self._recorded(vote_id) if on_card is not None else []:
                if user not in choices and self._open(vote_id):
                    await self._apply(vote_id, user, None)
            for user, choice in choices.items():
                if not self._open(vote_id):
                    return
                await self._apply(vote_id, user, choice)

    def _recorded(self, vote_id: str) -> list[str]:
        """Who has a vote on record (e.g. cast before a restart)."""
        ballot = self._handle.state.ballots.get(vote_id) if self._handle is not None else None
        return list(ballot.human_votes) if ballot is not None else []

    def _open(self, vote_id: str) -> bool:
        return self._handle is not None and self._handle.human_vote_open(vote_id)

    async def _apply(self, vote_id: str, user: str, choice: str | None) -> None:
        assert self._handle is not None
        try:
            if choice is None:
                await self._handle.withdraw_human_vote(vote_id, user)
            else:
                await self._handle.cast_human_vote(vote_id, user, choice, voter_name=user)
        except BallotError as exc:  # the window closed in the meantime
            log.debug("vote %s by %s not counted: %s", vote_id, user, exc)
