"""What a vote card shows, kept the same way by both front ends: the ballot, the AI votes as they
arrive, each person's current choice, the people's window and the result. Pure; each front end draws
it in its own terms (adapters/discord/render/votecard.py, adapters/slack/render/votecard.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from adapters.card_text import either
from core.events import HumanVoteOpened, Verdict, VoteCast, VoteWithdrawn, VotingClosed, VotingStarted
from core.formats.council import ABSTAIN
from core.models import VoteOption

CardEvent = HumanVoteOpened | VoteCast | VoteWithdrawn | VotingClosed
"""The events that change a vote card once it is posted."""


@dataclass
class BallotCard:
    started: VotingStarted
    ai: dict[str, VoteCast] = field(default_factory=dict)
    people: dict[str, str] = field(default_factory=dict)  # a person's id → the option they hold now
    window: HumanVoteOpened | None = None
    closed: VotingClosed | None = None

    def see(self, event: CardEvent) -> None:
        """Take in what changed: a person's newer vote replaces theirs, a withdrawal removes it."""
        match event:
            case HumanVoteOpened():
                self.window = event
            case VoteCast() if event.voter.human:
                self.people[event.voter.id] = event.choice
            case VoteCast():
                self.ai[event.voter.id] = event
            case VoteWithdrawn():
                self.people.pop(event.voter.id, None)
            case VotingClosed():
                self.closed = event

    def option(self, key: str) -> VoteOption | None:
        return next((o for o in self.started.options if o.key == key), None)

    @property
    def open_options(self) -> tuple[VoteOption, ...]:
        """What people may vote for: the window's options (a tie offers only the tied ones)."""
        return self.window.options if self.window is not None else self.started.options

    def abstained(self) -> list[str]:
        """Who abstained (a council member), in the order the ballot lists its voters."""
        order = {p.id: i for i, p in enumerate(self.started.voters)}
        votes = sorted(self.ai.values(), key=lambda v: order.get(v.voter.id, len(order)))
        return [v.voter.name for v in votes if v.choice == ABSTAIN]

    def choice_text(self, key: str) -> str:
        """An option as the card names it (`✅ Keep`); each front end may mark it its own way."""
        option = self.option(key)
        return f"{option.emoji} {option.label}".strip() if option is not None else key

    @property
    def open_keys(self) -> list[str]:
        """The options people may vote for: during a tie, only the tied ones."""
        return [o.key for o in self.open_options if self.option(o.key) is not None]

    @property
    def narrowed(self) -> bool:
        """A tie's window offers fewer options than the ballot has."""
        return len(self.open_keys) < len(self.started.options)

    def marks(self, keys: Sequence[str] | None = None, joiner: str = "or") -> str:
        """`✅ Keep or ❌ Replace`: the options people may vote for, or `keys`."""
        return either([self.choice_text(k) for k in (self.open_keys if keys is None else keys)], joiner)

    def tally_text(self, tally: Mapping[str, float], keys: Sequence[str] | None = None) -> str:
        """`✅ Keep 2 · ❌ Replace 1`: every option in the ballot's order (or `keys`), then any other
        choice the tally holds (an abstention)."""
        if keys is None:
            keys = [o.key for o in self.started.options] + [k for k in tally if self.option(k) is None]
        return " · ".join(f"{self.choice_text(k)} {tally.get(k, 0):g}" for k in keys)

    def people_tally(self) -> dict[str, int]:
        counts = {o.key: 0 for o in self.open_options}
        for choice in self.people.values():
            counts[choice] = counts.get(choice, 0) + 1
        return counts


Ballot = TypeVar("Ballot", bound=BallotCard)


def council_ballot(fmt: str, ballots: Iterable[Ballot], verdict: Verdict) -> Ballot | None:
    """The ballot a council's decision came from: its tally and who abstained go on the verdict.
    Other rulings carry their reasons in words (the oxford audience's gains, say) and show no tally."""
    winner = verdict.winner
    if fmt != "council" or winner is None:
        return None
    return next((b for b in reversed(list(ballots)) if b.option(winner) is not None), None)
