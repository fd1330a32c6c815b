"""The reaction-ballot rule, once for every platform (pure): which vote a person's reactions cast.

One vote per person, and it is what the card shows: the newest vote reaction a person still has on
the card is their vote. Reacting again with another option moves the vote there; removing the
reaction that is the vote falls back to an older vote reaction the person still has on the card;
removing the last one withdraws the vote. So "keep, then replace, then remove replace" leaves a
vote for keep, because the keep reaction is still there for everyone to see.

Where the platform dates each reaction (Slack's `event_ts`), that time is the order, not the order
changes arrive in: a delivery that comes late (a retry, or one handled after a later one) does not
undo a newer change, and a late reaction takes its place among the person's older ones.

Only some options may be open to people (a tie offers the tied ones): reactions for the others are
remembered but cast nothing. After a restart the order of reactions made while no process watched is
unknown: the vote on record stays the vote while its reaction is still on the card; otherwise the
reaction on the earliest option in the card's order counts.

Platforms turn their reactions into option keys (emoji normalised their own way) before calling
this; bots' reactions, the ballot itself included, never reach it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


class ReactionBallot:
    """Who holds which option reactions on one vote card, oldest first."""

    def __init__(self, keys: Sequence[str]) -> None:
        """`keys`: the card's option keys, in the card's order."""
        self._rank = {key: i for i, key in enumerate(keys)}
        self._held: dict[str, list[str]] = {}  # person → option keys, oldest first
        self._at: dict[tuple[str, str], float] = {}  # (person, key) → time of its newest change seen
        self._open: frozenset[str] | None = None  # the options people may choose; None: all

    def is_option(self, key: str | None) -> bool:
        return key is not None and key in self._rank

    def open_only(self, keys: Iterable[str] | None) -> None:
        """Count only reactions for these options from now on (None: every option)."""
        self._open = None if keys is None else frozenset(keys)

    def choice(self, person: str) -> str | None:
        """The person's vote now, or None."""
        for key in reversed(self._held.get(person, [])):
            if self._open is None or key in self._open:
                return key
        return None

    def choices(self) -> dict[str, str]:
        """person → their vote, for everyone who has one."""
        return {person: key for person in self._held if (key := self.choice(person)) is not None}

    def added(self, person: str, key: str, at: float | None = None) -> bool:
        """A reaction for option `key` came in (`at`: when it was made, if the platform says);
        False when `key` is not one of the card's options, or a newer change of it was seen."""
        if not self.is_option(key) or not self._newest(person, key, at):
            return False
        held = self._held.setdefault(person, [])
        if key in held:
            held.remove(key)
        held.append(key)
        if at is not None:  # among the person's reactions by when they were made (unknown: older)
            held.sort(key=lambda k: self._at.get((person, k), float("-inf")))
        return True

    def removed(self, person: str, key: str, at: float | None = None) -> bool:
        """A reaction went away; False when the person did not hold it (or a newer change was seen)."""
        if not self._newest(person, key, at):
            return False
        held = self._held.get(person)
        if held is None or key not in held:
            return False
        held.remove(key)
        if not held:
            del self._held[person]
        return True

    def _newest(self, person: str, key: str, at: float | None) -> bool:
        """Whether a change made at `at` is newer than every change of the reaction seen so far."""
        if at is None:
            return True
        last = self._at.get((person, key))
        if last is not None and at <= last:
            return False
        self._at[(person, key)] = at
        return True

    def reconcile(
        self,
        on_card: Mapping[str, Iterable[str]],
        voted: Mapping[str, str] | None = None,
        *,
        keep: Iterable[str] = (),
    ) -> None:
        """Take what is on the card now (person → option keys they react with) as the truth.

        The order known from reactions seen live is kept. Reactions seen only now count as older,
        the person's vote on record (`voted`) newest among them, then the earliest option. `keep`:
        people whose reactions were seen change after the card was read: what was seen stands."""
        voted = voted or {}
        kept = set(keep)
        fresh = {person: held for person, held in self._held.items() if person in kept}
        for person, keys in on_card.items():
            if person in kept:
                continue
            present = [k for k in dict.fromkeys(keys) if self.is_option(k)]
            if not present:
                continue
            known = [k for k in self._held.get(person, []) if k in present]
            unseen = sorted(
                (k for k in present if k not in known),
                key=lambda k: (k == voted.get(person), -self._rank[k]),
            )
            fresh[person] = unseen + known
        self._held = fresh
