"""What a debate gives back: its result when it ends, and a status view while it runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.events import Event
from core.models import Statistics
from core.ports import DebateRecord
from core.state import DebateState


@dataclass(frozen=True)
class DebateResult:
    debate_id: str
    reason: str
    detail: str
    summary: str
    stats: Statistics


@dataclass(frozen=True)
class DebateStatusView:
    """What `/debate status` shows."""

    debate_id: str
    format: str
    topic: str
    phase: str
    round: int
    speaker: str | None
    elapsed: float
    remaining: float | None
    turns: int


def status_from_log(record: DebateRecord, events: Sequence[Event]) -> DebateStatusView:
    """A running debate's status rebuilt from its stored log, for a process that does not run it
    (its clock as of its last tick)."""
    s = DebateState.replay(record.id, list(events))
    speaking = s.open_turn.speaker if s.open_turn else s.active_speaker
    return DebateStatusView(
        debate_id=record.id,
        format=s.format or record.format,
        topic=record.topic,
        phase=s.phase,
        round=s.round,
        speaker=speaking.name if speaking is not None else None,
        elapsed=s.clock.elapsed if s.clock is not None else 0.0,
        remaining=s.clock.remaining if s.clock is not None else None,
        turns=len(s.turns),
    )
