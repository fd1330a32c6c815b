"""What a vote card shows, kept the same way by both front ends: the ballot, the AI votes as they
arrive, each person's current choice, the people's window and the result. Pure; each front end draws
it in its own terms (adapters/discord/render/votecard.py, adapters/slack/render/votecard.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.events import HumanVoteOpened, VoteCast, VoteWithdrawn, VotingClosed, VotingStarted
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

    def people_tally(self) -> dict[str, int]:
        counts = {o.key: 0 for o in self.open_options}
        for choice in self.people.values():
            counts[choice] = counts.get(choice, 0) + 1
        return counts
