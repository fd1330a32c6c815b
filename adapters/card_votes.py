"""One vote card's reactions wired to the running debate, for every platform.

The platform turns each reaction into an option key (its own emoji names) and drops bots' reactions;
this keeps the card's `ReactionBallot` and hands each change of a person's vote to the debate. Votes
count only while the debate has a human window open for the card: reactions made before are
remembered and cast when it opens. Until the debate's handle is bound (a debate resuming after a
restart), reactions are only remembered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence

from adapters.reaction_ballot import ReactionBallot
from core.errors import BallotError
from core.events import VoteCast
from core.relayed_votes import RelayedReaction
from core.session import DebateHandle

log = logging.getLogger(__name__)


class CardVotes:
    def __init__(self, vote_id: str, keys: Sequence[str], handle: DebateHandle | None = None) -> None:
        """`keys`: the card's option keys, in the card's order."""
        self.vote_id = vote_id
        self.ballot = ReactionBallot(keys)
        self._handle = handle
        self._names: dict[str, str] = {}
        self._lock = asyncio.Lock()  # reactions are handled concurrently: apply them in order

    def bind(self, handle: DebateHandle) -> None:
        self._handle = handle

    @property
    def is_open(self) -> bool:
        return self._handle is not None and self._handle.human_vote_open(self.vote_id)

    async def reaction(
        self, person: str, key: str | None, *, added: bool, name: str | None = None, at: float | None = None
    ) -> None:
        """A person added or removed a reaction (`key`: the option it is for, None: no option; `at`:
        when, if the platform says: see `ReactionBallot`)."""
        if key is None:
            return
        if name is not None:
            self._names[person] = name
        async with self._lock:
            relayed = RelayedReaction(self.vote_id, person, key, added, at, name)
            if self._handle is not None and await self._handle.reaction_passed_on(relayed):
                return  # this copy was taken over (woken from a pause): the new owner's ballot counts
            before = self.ballot.choice(person)
            changed = self.ballot.added(person, key, at) if added else self.ballot.removed(person, key, at)
            after = self.ballot.choice(person)
            if changed and before != after and self.is_open:
                await self._apply(person, after)

    def restore(
        self,
        on_card: Mapping[str, Iterable[str]],
        names: Mapping[str, str],
        voted: Mapping[str, str],
        open_keys: Iterable[str] | None,
    ) -> None:
        """What the card shows after a restart (person → option keys they react with), before the
        debate runs again: the votes on record (`voted`) say which reaction is whose vote, and
        `open_keys` are the options open to people if a window had opened."""
        self._names.update(names)
        self.ballot.open_only(open_keys)
        self.ballot.reconcile(on_card, voted)

    async def window_opened(
        self,
        keys: Iterable[str],
        on_card: Mapping[str, Iterable[str]] | None = None,
        *,
        complete: bool = False,
        read_when: Mapping[str, VoteCast] | None = None,
    ) -> None:
        """People may vote for `keys` now: count the reactions for them. With `on_card` (person →
        option keys, as the card shows now) that is the truth, and a vote on record whose reaction
        is gone is taken back, as it is when the ballot is `complete` (it has seen every reaction,
        or read the card at a restart); otherwise the reactions seen so far count.

        `read_when`: the votes on record when the card was read (default: now). A person whose
        record changed since (a vote another process passed on while the read was under way) keeps
        it: the card as read is older than that vote."""
        before = dict(self.recorded()) if read_when is None else read_when
        async with self._lock:
            self.ballot.open_only(keys)
            if on_card is not None:
                now = self.recorded()
                since = {p for p in {*before, *now} if now.get(p) is not before.get(p)}
                self.ballot.reconcile(on_card, self._voted(), keep=since)  # the card is older for them
            await self._sync(withdraw_missing=complete or on_card is not None, read_when=before)

    async def card_read(
        self,
        on_card: Mapping[str, Iterable[str]],
        names: Mapping[str, str],
        read_when: Mapping[str, VoteCast],
    ) -> None:
        """The card as read again from the platform (person → option keys they react with), after
        changes to it may have gone unseen (a Discord process's new gateway session: reactions made
        while it was disconnected never reach it). That is the truth, counted if the window is open,
        except for people whose vote on record changed since `read_when` (when the read began)."""
        self._names.update(names)
        async with self._lock:
            now = self.recorded()
            since = {p for p in {*read_when, *now} if now.get(p) is not read_when.get(p)}
            self.ballot.reconcile(on_card, self._voted(), keep=since)
            await self._sync(withdraw_missing=True, read_when=read_when)

    async def sync(self) -> None:
        """Make the debate's record of people's votes match the ballot (while the window is open)."""
        async with self._lock:
            await self._sync(withdraw_missing=True, read_when=dict(self.recorded()))

    async def _sync(self, *, withdraw_missing: bool, read_when: Mapping[str, VoteCast]) -> None:
        def newer(person: str) -> bool:  # recorded since the ballot's view was taken: that stands
            return self.recorded().get(person) is not read_when.get(person)

        choices = self.ballot.choices()
        if withdraw_missing:
            for person in list(self.recorded()):
                if person not in choices and self.is_open and not newer(person):
                    await self._apply(person, None)
        for person, choice in choices.items():
            if not self.is_open:
                return
            if not newer(person):
                await self._apply(person, choice)

    def recorded(self) -> Mapping[str, VoteCast]:
        """People's votes the debate holds for this card."""
        record = self._handle.state.ballots.get(self.vote_id) if self._handle is not None else None
        return record.human_votes if record is not None else {}

    def _voted(self) -> dict[str, str]:
        return {person: vote.choice for person, vote in self.recorded().items()}

    async def _apply(self, person: str, choice: str | None) -> None:
        if self._handle is None:
            return
        try:
            if choice is None:
                await self._handle.withdraw_human_vote(self.vote_id, person)
            else:
                name = self._names.get(person, person)
                await self._handle.cast_human_vote(self.vote_id, person, choice, voter_name=name)
        except BallotError as exc:  # the window closed in the meantime
            log.debug("vote %s by %s not counted: %s", self.vote_id, person, exc)
