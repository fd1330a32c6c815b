"""A debate's state, rebuilt from its events. The session applies each event as it is emitted;
the same reducer rebuilds a stored debate (statistics, transcripts, resume)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import assert_never

from core.events import (
    Artifact,
    ClockTick,
    DebateCompleted,
    DebateStarted,
    Event,
    HumanVoteOpened,
    Notice,
    PhaseChanged,
    SpeakerSwitched,
    TurnCompleted,
    TurnDelta,
    TurnStarted,
    Verdict,
    VoteCast,
    VoteWithdrawn,
    VotingClosed,
    VotingStarted,
)
from core.models import CastMember, PersonaRef, PersonaStats, Statistics, TokenUsage, VoteOption


def word_count(text: str) -> int:
    return len(text.split())


@dataclass
class TurnRecord:
    turn_id: str
    speaker: PersonaRef
    role: str
    round: int
    text: str
    usage: TokenUsage
    fallback: bool = False
    interrupted: bool = False

    @property
    def words(self) -> int:
        text = self.text.removesuffix("…") if self.interrupted else self.text  # the cut is no word
        return word_count(text)


@dataclass
class OpenTurn:
    turn_id: str
    speaker: PersonaRef
    role: str
    round: int
    heading: str
    attempt: int
    partial: str = ""


@dataclass
class BallotRecord:
    vote_id: str
    title: str
    subject: PersonaRef | None
    options: tuple[VoteOption, ...]
    voters: tuple[PersonaRef, ...]
    ai_votes: dict[str, VoteCast] = field(default_factory=dict)
    human_votes: dict[str, VoteCast] = field(default_factory=dict)
    human_window: HumanVoteOpened | None = None
    closed: VotingClosed | None = None
    started_seq: int = 0  # the VotingStarted's place in the log (the card's)

    @property
    def human_open(self) -> bool:
        return self.human_window is not None and self.closed is None

    def human_tally(self) -> dict[str, int]:
        counts = Counter(v.choice for v in self.human_votes.values())
        return {o.key: counts.get(o.key, 0) for o in self.options}


@dataclass
class DebateState:
    debate_id: str
    format: str = ""
    topic: str = ""
    cast: tuple[CastMember, ...] = ()
    settings: dict[str, object] = field(default_factory=dict)
    phase: str = "starting"
    round: int = 0
    active_speaker: PersonaRef | None = None
    turns: list[TurnRecord] = field(default_factory=list)
    turn_ids: set[str] = field(default_factory=set)
    open_turn: OpenTurn | None = None
    ballots: dict[str, BallotRecord] = field(default_factory=dict)
    switches: list[SpeakerSwitched] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    tokens: TokenUsage = field(default_factory=TokenUsage)
    clock: ClockTick | None = None
    completed: DebateCompleted | None = None
    last_seq: int = 0

    @classmethod
    def replay(cls, debate_id: str, events: list[Event]) -> DebateState:
        state = cls(debate_id)
        for event in events:
            state.apply(event)
        return state

    @property
    def open_ballot(self) -> BallotRecord | None:
        for ballot in self.ballots.values():
            if ballot.closed is None:
                return ballot
        return None

    def apply(self, event: Event) -> None:
        self.last_seq = event.seq
        match event:
            case DebateStarted():
                self.format, self.topic, self.cast = event.format, event.topic, event.cast
                self.settings = dict(event.settings)
                self.active_speaker = next((m.persona for m in event.cast if m.role == "proposition"), None)
            case PhaseChanged():
                self.phase = event.phase
            case TurnStarted():
                self.turn_ids.add(event.turn_id)
                self.round = max(self.round, event.round)
                self.open_turn = OpenTurn(
                    event.turn_id, event.speaker, event.role, event.round, event.heading, event.attempt
                )
            case TurnDelta():
                if self.open_turn is not None and self.open_turn.turn_id == event.turn_id:
                    self.open_turn.partial += event.text
            case TurnCompleted():
                self.turns.append(
                    TurnRecord(
                        event.turn_id,
                        event.speaker,
                        event.role,
                        event.round,
                        event.text,
                        event.usage,
                        event.fallback,
                        event.interrupted,
                    )
                )
                self.tokens = self.tokens + event.usage
                if self.open_turn is not None and self.open_turn.turn_id == event.turn_id:
                    self.open_turn = None
            case VotingStarted():
                self.ballots[event.vote_id] = BallotRecord(
                    event.vote_id,
                    event.title,
                    event.subject,
                    event.options,
                    event.voters,
                    started_seq=event.seq,
                )
            case HumanVoteOpened():
                ballot = self.ballots.get(event.vote_id)
                if ballot is not None:
                    ballot.human_window = event
            case VoteCast():
                ballot = self.ballots.get(event.vote_id)
                if ballot is not None:
                    target = ballot.human_votes if event.voter.human else ballot.ai_votes
                    target[event.voter.id] = event
                self.tokens = self.tokens + event.usage
            case VoteWithdrawn():
                ballot = self.ballots.get(event.vote_id)
                if ballot is not None:
                    ballot.human_votes.pop(event.voter.id, None)
            case VotingClosed():
                ballot = self.ballots.get(event.vote_id)
                if ballot is not None:
                    ballot.closed = event
            case SpeakerSwitched():
                self.switches.append(event)
                self.active_speaker = event.new
            case ClockTick():
                self.clock = event
            case Verdict():
                self.verdicts.append(event)
                self.tokens = self.tokens + event.usage
            case Notice():
                self.notices.append(event)
                self.tokens = self.tokens + event.usage
            case Artifact():
                self.artifacts.append(event)
            case DebateCompleted():
                self.completed = event
                self.phase = "completed"
            case _:
                assert_never(event)

    def statistics(self, *, debate_seconds: float, paused_seconds: float) -> Statistics:
        per: dict[str, dict[str, int]] = {}
        refs: dict[str, PersonaRef] = {m.persona.id: m.persona for m in self.cast}

        def slot(ref: PersonaRef) -> dict[str, int]:
            refs.setdefault(ref.id, ref)
            return per.setdefault(
                ref.id,
                {"turns": 0, "words": 0, "judged": 0, "votes_keep": 0, "votes_replace": 0, "tokens": 0},
            )

        for member in self.cast:
            slot(member.persona)
        for turn in self.turns:
            s = slot(turn.speaker)
            s["turns"] += 1
            s["words"] += 0 if turn.fallback else turn.words  # a stand-in line is not the persona's
            s["tokens"] += turn.usage.total
        votes = human_votes = by_people = 0
        for ballot in self.ballots.values():
            if ballot.closed is not None and ballot.closed.decision == "replace":
                ai_replace = sum(1 for v in ballot.ai_votes.values() if v.choice == "replace")
                if ballot.closed.tie_broken_by == "humans" or ai_replace * 2 <= len(ballot.ai_votes):
                    by_people += 1  # the observers alone had no majority to replace
            all_votes = [*ballot.ai_votes.values(), *ballot.human_votes.values()]
            votes += len(ballot.ai_votes)
            human_votes += len(ballot.human_votes)
            if ballot.subject is not None and ballot.closed is not None:
                s = slot(ballot.subject)
                s["judged"] += 1
                s["votes_keep"] += sum(1 for v in all_votes if v.choice == "keep")
                s["votes_replace"] += sum(1 for v in all_votes if v.choice == "replace")
        spoken = [t for t in self.turns if not t.fallback]
        defaulted = sum(1 for b in self.ballots.values() for v in b.ai_votes.values() if v.defaulted)
        return Statistics(
            rounds=self.round,
            turns=len(self.turns),
            words=sum(t.words for t in spoken),
            votes=votes,
            human_votes=human_votes,
            switches=len(self.switches),
            switches_by_people=min(by_people, len(self.switches)),
            notices=len(self.notices),
            fallbacks=len(self.turns) - len(spoken),
            defaulted_votes=defaulted,
            debate_seconds=round(debate_seconds, 1),
            paused_seconds=round(paused_seconds, 1),
            tokens=self.tokens,
            per_persona=tuple(PersonaStats(persona=refs[pid], **vals) for pid, vals in per.items()),
        )
