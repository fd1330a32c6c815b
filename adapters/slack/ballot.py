"""Who holds which vote reactions on one vote card, oldest first (pure).

One vote per person: the newest vote reaction a person still has on the card is their vote;
removing it falls back to an older one they still have there, and removing the last withdraws it.
When only some options are open to people (a tie among some of them), reactions for the others are
kept but do not count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from adapters.slack.emoji import normalise_reaction


class ReactionLedger:
    def __init__(self, reactions: Mapping[str, str]) -> None:
        """`reactions`: option key → the reaction name that votes for it."""
        self._order = list(reactions)
        self._key_of = {name: key for key, name in reactions.items()}
        self._held: dict[str, list[str]] = {}  # person → raw reaction names, oldest first
        self._open: frozenset[str] | None = None  # the options people may choose; None: all

    def open_only(self, keys: Iterable[str] | None) -> None:
        """Count only reactions for these options from now on (None: every option)."""
        self._open = None if keys is None else frozenset(keys)

    def option_for(self, reaction: str) -> str | None:
        return self._key_of.get(normalise_reaction(reaction))

    def choice(self, user: str) -> str | None:
        for reaction in reversed(self._held.get(user, [])):
            key = self.option_for(reaction)
            if key is not None and (self._open is None or key in self._open):
                return key
        return None

    def choices(self) -> dict[str, str]:
        return {user: key for user in self._held if (key := self.choice(user)) is not None}

    def added(self, user: str, reaction: str) -> bool:
        """Record a reaction; False when it is not a vote reaction."""
        if self.option_for(reaction) is None:
            return False
        held = self._held.setdefault(user, [])
        if reaction in held:
            held.remove(reaction)
        held.append(reaction)
        return True

    def removed(self, user: str, reaction: str) -> bool:
        held = self._held.get(user)
        if held is None or reaction not in held:
            return False
        held.remove(reaction)
        if not held:
            del self._held[user]
        return True

    def reconcile(self, on_card: Mapping[str, Iterable[str]]) -> None:
        """Take what is on the card now (person → reaction names). Order known from events is kept;
        reactions seen only now count as older, in the card's option order."""
        rank = {key: i for i, key in enumerate(self._order)}
        fresh: dict[str, list[str]] = {}
        for user, names in on_card.items():
            votes = [n for n in names if self.option_for(n) is not None]
            if not votes:
                continue
            known = [n for n in self._held.get(user, []) if n in votes]
            unseen = sorted(
                (n for n in votes if n not in known), key=lambda n: rank[self.option_for(n) or ""]
            )
            fresh[user] = unseen + known
        self._held = fresh
