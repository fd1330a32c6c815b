"""Value objects shared by the engine, the store and the front ends."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Persona(_Frozen):
    """A speaker from the cast in config: who they are and how they talk."""

    id: str
    name: str
    emoji: str
    avatar_url: str | None = None
    color: str = "white"
    voice: str = ""
    habits: str = ""

    def ref(self) -> PersonaRef:
        return PersonaRef(
            id=self.id, name=self.name, emoji=self.emoji, avatar_url=self.avatar_url, color=self.color
        )


class PersonaRef(_Frozen):
    """What a front end needs to show a persona: name, emoji, avatar, colour."""

    id: str
    name: str
    emoji: str
    avatar_url: str | None = None
    color: str = "white"

    @property
    def label(self) -> str:
        return f"{self.emoji} {self.name}"


class CastMember(_Frozen):
    persona: PersonaRef
    role: str


class Voter(_Frozen):
    """Who cast a vote: a persona (AI) or a person in the channel."""

    id: str
    name: str
    emoji: str = ""
    human: bool = False

    @classmethod
    def of(cls, persona: PersonaRef) -> Voter:
        return cls(id=persona.id, name=persona.name, emoji=persona.emoji, human=False)


class VoteOption(_Frozen):
    key: str
    label: str
    emoji: str


MIXED_MODELS = "mixed"


class TokenUsage(_Frozen):
    """Tokens of one model call or of a sum of calls, with their cost in US dollars.

    `model` names the model string of the call(s) ("mixed" for a sum over several models, "" when
    unknown); `cost_usd` is 0 when no price is configured for the model.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    model: str = ""

    @property
    def total(self) -> int:
        """Tokens billed: input (including cache reads and writes) plus output."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            model=_sum_model(self, other),
        )


def _sum_model(a: TokenUsage, b: TokenUsage) -> str:
    if not a.model:
        return b.model
    if not b.model:
        return a.model
    return a.model if a.model == b.model else MIXED_MODELS


class Source(_Frozen):
    """A link a debater cited (research tools)."""

    title: str
    url: str


class QuoteCheck(_Frozen):
    """A quotation a panellist gave from their document, checked against its text."""

    text: str
    verified: bool


class PersonaStats(_Frozen):
    persona: PersonaRef
    turns: int = 0
    words: int = 0
    judged: int = 0
    votes_keep: int = 0
    votes_replace: int = 0
    tokens: int = 0


class Statistics(_Frozen):
    """Closing figures of a debate, computed from its event log."""

    rounds: int = 0
    turns: int = 0
    words: int = 0
    votes: int = 0
    human_votes: int = 0
    switches: int = 0
    switches_by_people: int = 0  # the people's vote decided them (a tie broken, or their vote tipped it)
    notices: int = 0
    fallbacks: int = 0  # turns a stand-in line spoke for (the model failed twice)
    defaulted_votes: int = 0  # AI votes counted by default (the voter's model failed)
    debate_seconds: float = 0.0
    paused_seconds: float = 0.0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    per_persona: tuple[PersonaStats, ...] = ()

    def fallbacks_said(self) -> str:
        """The stand-ins a failing model left, for the closing figures ("" when none)."""
        return ", ".join(f"{n} {label}" for n, label in fallback_counts(self) if n)

    def switch_deciders(self) -> str:
        """Who decided the switches: `` (2 by the observers' majority, 1 by the people)``; "" if none."""
        by_ai = self.switches - self.switches_by_people
        parts = [f"{by_ai} by the observers' majority"] if by_ai else []
        parts += [f"{self.switches_by_people} by the people"] if self.switches_by_people else []
        return f" ({', '.join(parts)})" if parts else ""


def fallback_counts(stats: Statistics) -> tuple[tuple[int, str], ...]:
    """What a failing model left in the debate: stand-in lines and votes counted by default."""
    return (
        (stats.fallbacks, "fallback lines" if stats.fallbacks != 1 else "fallback line"),
        (
            stats.defaulted_votes,
            "votes counted by default" if stats.defaulted_votes != 1 else "vote counted by default",
        ),
    )
