"""council's rules, apart from the run: its options, the ballot (proposals, votes, abstaining),
how votes are counted and how close the proposals have come. Pure: no model calls, no events."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from core.context import trim
from core.errors import ModelCallError
from core.models import Persona
from core.prompts import council as prompts

ABSTAIN = "abstain"
EMOJIS = ("1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣")
VOTE_ID = "v1"

Strategy = Literal["majority", "weighted", "consensus", "moderator"]
TieBreaker = Literal["humans", "default"]

STRATEGY_TEXT = {
    "majority": "by majority",
    "weighted": "by expertise-weighted vote",
    "consensus": "seeking consensus",
    "moderator": "the moderator decides",
}


class CouncilOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(2, ge=0, le=5, description="critique-and-revise rounds after the proposals")
    strategy: Strategy = Field("majority", description="majority | weighted | consensus | moderator")
    humans: Literal["off", "tiebreak"] = Field("tiebreak", description="whether people break ties")
    human_window: int = Field(30, ge=5, le=600, description="seconds people have to break a tie")


class MemberVote(BaseModel):
    """A member's vote: a proposal's key or "abstain" (`choice_schema` narrows it to the ballot)."""

    choice: str
    reason: str = Field(description="one sentence of reasoning")

    @field_validator("reason")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return trim(value, 300)


class ModeratorPick(MemberVote):
    """The moderator's choice: a proposal's key (no abstaining)."""


V = TypeVar("V", bound=MemberVote)


def choice_schema(base: type[V], keys: Sequence[str]) -> type[V]:
    """`base` with `choice` limited to `keys`, so a model (or a rehearsal) can only name a real option."""
    allowed: Any = cast(Any, Literal)[tuple(keys)]
    return create_model(
        base.__name__,
        __base__=base,
        choice=(allowed, Field(description=f"one of: {', '.join(keys)}")),
    )


# --- convergence -------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be been but by can could do does for from had has have i if in into is it its"
        " me my no not of on or our should so than that the their them then there these they this to"
        " was we were what when which while who will with would you your",
    )
)


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS)


def similarity(a: str, b: str) -> float:
    """Word overlap of two texts: shared content words over all their content words (0 to 1)."""
    wa, wb = content_words(a), content_words(b)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def closeness(texts: Sequence[str]) -> float:
    """How far a set of proposals agrees: the least similar pair's overlap (0 for fewer than two)."""
    if len(texts) < 2:
        return 0.0
    return min(similarity(a, b) for a, b in combinations(texts, 2))


# --- counting ----------------------------------------------------------------------------------


def tally_votes(
    votes: Mapping[str, str], keys: Sequence[str], weights: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Votes (voter id → choice) per proposal key; abstentions count for nothing."""
    tally = dict.fromkeys(keys, 0.0)
    for voter, choice in votes.items():
        if choice in tally:
            tally[choice] += weights[voter] if weights is not None else 1.0
    return {k: round(v, 6) for k, v in tally.items()}  # 1.5 + 1.2 must equal 2.7


def leaders(tally: Mapping[str, float]) -> list[str]:
    """The keys with the top count, in ballot order (so the first is the earliest proposal)."""
    best = max(tally.values(), default=0.0)
    return [k for k, v in tally.items() if v == best]


def ballot_entries(proposals: Sequence[Proposal]) -> list[prompts.Entry]:
    return [(p.key, p.author.name, p.text) for p in proposals]


def failure_reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, ModelCallError) else str(exc) or type(exc).__name__


def joined_names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class Proposal:
    """A member's latest proposal, as it stands on the ballot."""

    key: str
    author: Persona
    text: str

    @property
    def label(self) -> str:
        return f"{self.author.name}'s proposal"


@dataclass(frozen=True)
class Ruling:
    """How the vote came out. `how` reads after "the council adopted X"; `explain` says how the
    tally was counted (shown on the vote card, not repeated in the summary)."""

    winner: Proposal
    tally: dict[str, float]
    how: str
    notes: tuple[str, ...]
    explain: str = ""
    human_tally: dict[str, int] = field(default_factory=dict)
    tie_broken_by: TieBreaker | None = None
    by: Persona | None = None
