"""The typed event union: everything a debate says to the outside world.

Formats build events without `debate_id`, `seq` and `at`; the session stamps those when it
emits (store first, then the sink), so `seq` is gap-free per debate. Front ends `match` on the
union exhaustively (`typing.assert_never` in the default branch).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from core.models import (
    CastMember,
    PersonaRef,
    QuoteCheck,
    Source,
    Statistics,
    TokenUsage,
    VoteOption,
    Voter,
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

HumanMode = Literal["off", "tiebreak", "vote"]
CompletionReason = Literal["completed", "time_up", "max_rounds", "budget", "stopped", "failed", "interrupted"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    debate_id: str = ""
    seq: int = 0
    at: datetime = _EPOCH


class DebateStarted(_Event):
    kind: Literal["debate_started"] = "debate_started"
    format: str
    topic: str
    cast: tuple[CastMember, ...]
    settings: dict[str, Any] = Field(default_factory=dict)


class PhaseChanged(_Event):
    kind: Literal["phase_changed"] = "phase_changed"
    phase: str
    detail: str = ""


class TurnStarted(_Event):
    """A persona begins speaking. A repeated `turn_id` (attempt > 1) replaces the partial text."""

    kind: Literal["turn_started"] = "turn_started"
    turn_id: str
    speaker: PersonaRef
    role: str
    round: int
    heading: str
    attempt: int = 1


class TurnDelta(_Event):
    kind: Literal["turn_delta"] = "turn_delta"
    turn_id: str
    text: str


class TurnCompleted(_Event):
    """The authoritative full text of a turn; front ends make their message match it.

    `elapsed` is the debate clock when the turn ended (stamped by the session), for resuming.
    """

    kind: Literal["turn_completed"] = "turn_completed"
    turn_id: str
    speaker: PersonaRef
    role: str
    round: int
    text: str
    usage: TokenUsage = Field(default_factory=TokenUsage)
    fallback: bool = False
    interrupted: bool = False
    elapsed: float | None = None
    sources: tuple[Source, ...] = ()
    quotes: tuple[QuoteCheck, ...] = ()


class VotingStarted(_Event):
    kind: Literal["voting_started"] = "voting_started"
    vote_id: str
    title: str
    subject: PersonaRef | None = None
    options: tuple[VoteOption, ...]
    voters: tuple[PersonaRef, ...] = ()
    humans: HumanMode = "off"


class HumanVoteOpened(_Event):
    """People may vote on `vote_id` for `window` seconds (through the handle)."""

    kind: Literal["human_vote_opened"] = "human_vote_opened"
    vote_id: str
    options: tuple[VoteOption, ...]
    window: float
    reason: Literal["tie", "vote"]


class VoteCast(_Event):
    kind: Literal["vote_cast"] = "vote_cast"
    vote_id: str
    voter: Voter
    choice: str
    reason: str = ""
    defaulted: bool = False
    usage: TokenUsage = Field(default_factory=TokenUsage)


class VoteWithdrawn(_Event):
    """A person took their vote back (removed their reaction)."""

    kind: Literal["vote_withdrawn"] = "vote_withdrawn"
    vote_id: str
    voter: Voter


class VotingClosed(_Event):
    kind: Literal["voting_closed"] = "voting_closed"
    vote_id: str
    tally: dict[str, float]
    human_tally: dict[str, int] = Field(default_factory=dict)
    decision: str
    decision_label: str
    tie_broken_by: Literal["humans", "default"] | None = None
    note: str = ""


class SpeakerSwitched(_Event):
    kind: Literal["speaker_switched"] = "speaker_switched"
    old: PersonaRef
    new: PersonaRef
    round: int
    reason: str


class ClockTick(_Event):
    kind: Literal["clock_tick"] = "clock_tick"
    elapsed: float
    remaining: float | None
    paused: bool
    paused_total: float = 0.0


class Verdict(_Event):
    kind: Literal["verdict"] = "verdict"
    title: str
    winner: str | None
    winner_label: str
    reasoning: str
    by: PersonaRef | None = None
    final: bool = True
    tally: dict[str, float] = Field(default_factory=dict)
    usage: TokenUsage = Field(default_factory=TokenUsage)


class Notice(_Event):
    kind: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"]
    code: str
    message: str
    usage: TokenUsage = Field(default_factory=TokenUsage)


class Artifact(_Event):
    """A file the debate produced (e.g. the panel's Q&A in Markdown)."""

    kind: Literal["artifact"] = "artifact"
    name: str
    media_type: str
    content: str


class DebateCompleted(_Event):
    kind: Literal["debate_completed"] = "debate_completed"
    reason: CompletionReason
    detail: str = ""
    stats: Statistics
    summary: str = ""


Event = Annotated[
    DebateStarted
    | PhaseChanged
    | TurnStarted
    | TurnDelta
    | TurnCompleted
    | VotingStarted
    | HumanVoteOpened
    | VoteCast
    | VoteWithdrawn
    | VotingClosed
    | SpeakerSwitched
    | ClockTick
    | Verdict
    | Notice
    | Artifact
    | DebateCompleted,
    Field(discriminator="kind"),
]

_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def dump_event(event: Event) -> str:
    """Serialise an event to JSON (the store's payload format)."""
    return event.model_dump_json()


def load_event(payload: str | bytes) -> Event:
    return _ADAPTER.validate_json(payload)


E = TypeVar("E", bound=Event)


class Emit(Protocol):
    """A debate's emit path: takes an event and gives it back stamped (`debate_id`, `seq`, `at`),
    of the same type, once it is stored and handed to the sink."""

    async def __call__(self, event: E, /) -> E: ...
