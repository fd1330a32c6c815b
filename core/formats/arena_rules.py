"""arena's rules, apart from the run: its options, the keep-or-replace ballot, how a vote's
figures read, and the closing figures. Pure: no model calls, no events."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.models import VoteOption
from core.state import TurnRecord
from core.words import plural

KEEP = VoteOption(key="keep", label="Keep", emoji="✅")
REPLACE = VoteOption(key="replace", label="Replace", emoji="❌")
OPTIONS = (KEEP, REPLACE)

STANCE = {"proposition": "for", "opposition": "against", "moderator": "moderator"}


class ArenaOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    duration: int = Field(300, ge=30, le=7200, description="debate time in seconds (votes excluded)")
    exchanges_per_round: int = Field(3, ge=1, le=10, description="exchanges before each vote")
    rounds: int | None = Field(
        None,
        ge=1,
        le=200,
        description="rounds (exchanges, then a vote; none after the last) before the moderator sums up",
    )
    first_speaker: str | None = Field(None, description="persona id from the pool; random if unset")
    humans: Literal["off", "tiebreak", "vote"] = Field("tiebreak", description="how people vote")
    human_window: int = Field(30, ge=5, le=600, description="seconds people have to vote")


class ArenaVote(BaseModel):
    """An observer's judgement of the active speaker."""

    vote: Literal["keep", "replace"]
    reason: str = Field(description="one sentence of reasoning")

    @field_validator("reason")
    @classmethod
    def _one_line(cls, value: str) -> str:
        flat = " ".join(value.split())
        return flat if len(flat) <= 300 else flat[:299] + "…"


def turn_label(turn: TurnRecord) -> str:
    return f"{turn.speaker.name}, {STANCE.get(turn.role, turn.role)}"


def all_played(rounds: int) -> str:
    return f"all {rounds} rounds were played" if rounds > 1 else "its one round was played"


def clock_text(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 60}:{s % 60:02d}"


def switch_reason(
    tally: dict[str, float],
    human_tally: dict[str, int],
    tie_broken_by: str | None,
    *,
    ai: tuple[int, int],
) -> str:
    """Who sent the speaker off, with the figures that decided it."""
    ai_replace, ai_keep = ai
    if tie_broken_by == "humans":
        people = f"{human_tally.get('replace', 0)}–{human_tally.get('keep', 0)}"
        return f"the people broke a {ai_replace}–{ai_keep} tie of the observers, voting {people} to replace"
    if human_tally and (tally["replace"], tally["keep"]) != (ai_replace, ai_keep):
        return (
            f"voted off {int(tally['replace'])}–{int(tally['keep'])}: the observers {ai_replace}–{ai_keep},"
            " the people's majority counted as one vote"
        )
    return f"voted off {ai_replace}–{ai_keep} by the observers' majority"


def people_majority(tally: dict[str, int]) -> str | None:
    keep, replace = tally.get("keep", 0), tally.get("replace", 0)
    if keep == replace:
        return None
    return "keep" if keep > replace else "replace"


def tally_text(tally: dict[str, int]) -> str:
    labels = {o.key: o.label.lower() for o in OPTIONS}
    return ", ".join(f"{labels.get(k, k)} {v}" for k, v in tally.items())


def closing_figures(stats: dict[str, Any], spoken: list[TurnRecord], switches: int) -> str:
    by_speaker: dict[str, int] = {}
    for turn in spoken:
        by_speaker[turn.speaker.name] = by_speaker.get(turn.speaker.name, 0) + 1
    speakers = ", ".join(f"{name} {n}" for name, n in by_speaker.items()) or "none"
    return (
        f"{plural(stats['turns'], 'turn')} over {plural(stats['rounds'], 'round')} ({speakers}); "
        f"{plural(switches, 'speaker switch')}; {int(stats['debate_seconds'])} s of debate."
    )
