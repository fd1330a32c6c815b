"""The shapes of a debate's results picture (pure values): who, colours, and one picture type per
format. `adapters.pictures.data` reads them from the event log; the drawing, the terminal chart and
the shared page start from them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.models import PersonaRef

# Config colours are terminal colour names; on a picture they become mid-tone hues that read on a
# white card and keep their contrast when the card sits in a dark chat theme.
# Config colours are terminal colour names; on a picture they become mid-tone hues that read on a
# white card and keep their contrast when the card sits in a dark chat theme.
PALETTE = {
    "red": "#d1343a",
    "bright_red": "#e8590c",
    "green": "#2f9e44",
    "bright_green": "#66a80f",
    "yellow": "#c08a00",
    "bright_yellow": "#e67700",
    "blue": "#1c5fd4",
    "bright_blue": "#3b82f6",
    "magenta": "#a61e8f",
    "bright_magenta": "#d6336c",
    "cyan": "#0b7285",
    "bright_cyan": "#1098ad",
    "white": "#6c757d",
    "bright_white": "#868e96",
    "black": "#343a40",
    "bright_black": "#495057",
}
FALLBACK_COLOR = "#5f3dc4"
LEANING = 0.2
"""Word overlap from which a member's revision counts as leaning towards another's proposal."""
KEEP_COLOR = "#2f9e44"
REPLACE_COLOR = "#d1343a"
UNDECIDED_COLOR = "#adb5bd"


def hex_color(name: str) -> str:
    """A config colour (a terminal colour name, or already `#rrggbb`) as a picture colour."""
    key = name.strip().lower().replace(" ", "_")
    if re.fullmatch(r"#[0-9a-f]{6}", key):
        return key
    return PALETTE.get(key, FALLBACK_COLOR)


def initials(name: str) -> str:
    """ "Ada Quill" → "AQ" (an avatar that needs no image)."""
    firsts = [
        next(ch for ch in word if ch.isalnum()) for word in name.split() if any(c.isalnum() for c in word)
    ]
    return "".join(firsts[:2]).upper() or "?"


@dataclass(frozen=True)
class Who:
    """A persona as a picture shows them: name, colour, initials."""

    id: str
    name: str
    color: str
    initials: str

    @classmethod
    def of(cls, ref: PersonaRef) -> Who:
        return cls(id=ref.id, name=ref.name, color=hex_color(ref.color), initials=initials(ref.name))


# --- arena ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FloorSpell:
    """One persona holding the proposition's floor from `first_round` to `last_round`."""

    speaker: Who
    first_round: int
    last_round: int
    turns: int
    replaced: bool  # voted off (else they held it to the end)


@dataclass(frozen=True)
class FloorVote:
    """One observers' vote on whoever held the floor, after `round`."""

    vote_id: str
    round: int
    subject: Who | None
    keep: float
    replace: float
    people_keep: int
    people_replace: int
    decision: str  # "keep", "replace" (or "none")
    replaced_by: tuple[str, ...] = ()  # the observers (by name) who voted to replace


@dataclass(frozen=True)
class ArenaPicture:
    topic: str
    title: str
    opposition: Who | None
    spells: tuple[FloorSpell, ...]
    votes: tuple[FloorVote, ...]
    rounds: int
    alt: str


# --- oxford -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Audience:
    """People's stand on the motion: for, against, undecided."""

    for_: int
    against: int
    undecided: int

    @property
    def total(self) -> int:
        return self.for_ + self.against + self.undecided


@dataclass(frozen=True)
class OxfordPicture:
    topic: str
    title: str
    proposer: Who | None
    critic: Who | None
    before: Audience | None  # None: the audience did not vote
    after: Audience | None
    swing_for: int
    swing_against: int
    rounds: tuple[int, ...]
    words_for: tuple[int, ...]  # per round, the proposer's words
    words_against: tuple[int, ...]
    verdict: str  # the judge's ruling ("" when none)
    audience_verdict: str
    alt: str


# --- council ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProposalSupport:
    """One proposal's support at each stage, then its votes.

    Before the vote, a proposal's support is the number of other members whose latest text is
    closest to it and shares at least `LEANING` of its content words (of equally close ones, the
    earliest proposal, as the council's own ties go): who is leaning towards it as they revise.
    """

    key: str
    author: Who
    support: tuple[float, ...]
    won: bool


@dataclass(frozen=True)
class CouncilPicture:
    topic: str
    title: str
    stages: tuple[str, ...]  # "Proposals", "Round 1", …, "Vote"
    proposals: tuple[ProposalSupport, ...]
    outcome: str
    alt: str


# --- panel ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PanelPicture:
    topic: str
    title: str
    panellists: tuple[Who, ...]
    agreement: tuple[tuple[float, ...], ...]  # word overlap of final answers, 0 to 1, symmetric
    quotes_verified: tuple[int, ...]
    quotes_total: tuple[int, ...]
    questions: int
    alt: str


ResultsPicture = ArenaPicture | OxfordPicture | CouncilPicture | PanelPicture
