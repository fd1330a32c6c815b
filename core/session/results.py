"""What a debate gives back: its result when it ends, and a status view while it runs."""

from __future__ import annotations

from dataclasses import dataclass

from core.models import Statistics


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
