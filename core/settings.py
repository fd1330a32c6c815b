"""The settings the core reads. `bot.config` composes them with the platform sections."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.models import Persona


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ModelPrice(_Section):
    """What a model costs, in US dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0, description="5-minute cache write")
    cache_read: float = Field(ge=0)
    cache_min_tokens: int = Field(
        1024, ge=0, description="shortest prefix the provider caches (below it a breakpoint is ignored)"
    )


BALLOT_ROLES = ("observer", "council")
"""Roles whose votes are short structured replies (arena observers, council ballots)."""


class ModelSettings(_Section):
    """Which model speaks for each role.

    A model string is `scripted`, `anthropic:<model-id>` or any agno `provider:model-id`.
    `default` speaks, summarises and judges; `ballots` (when set) casts the short structured votes
    of observers and council members; `roles` overrides both for every call of a role.
    """

    default: str = "anthropic:claude-sonnet-5-5"
    roles: dict[str, str] = Field(default_factory=dict)
    ballots: str | None = None
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    temperature: dict[str, Annotated[float, Field(ge=0.0, le=2.0)]] = Field(default_factory=dict)
    max_tokens: dict[str, Annotated[int, Field(ge=1, le=200_000)]] = Field(
        default_factory=lambda: {"turn": 600, "vote": 300, "summary": 900}
    )
    effort: dict[str, Literal["low", "medium", "high", "xhigh", "max"]] = Field(
        default_factory=dict, description="Claude 5 models: output_config.effort per call kind"
    )
    script: str | None = None
    latency: float = Field(0.08, ge=0.0, le=5.0, description="scripted: seconds per streamed chunk")
    anthropic_base_url: str | None = None
    call_timeout: float = Field(120.0, gt=0)
    failure_limit: int = Field(
        6,
        ge=1,
        le=1000,
        description="failed calls in a row (one provider) after which the debate ends failed (an"
        " unavailable provider, overloaded, 5xx, rate-limited or not answering, is waited out instead)",
    )
    outage_limit: float = Field(
        600.0,
        ge=0.0,
        description="seconds a debate waits out an unavailable model provider before it stops, resumable",
    )

    def model_for(self, role: str, kind: str = "turn") -> str:
        if self.script:
            return "scripted"
        if role in self.roles:
            return self.roles[role]
        # A scripted default is the offline rehearsal: every role stays scripted.
        ballot = kind == "vote" and role in BALLOT_ROLES and self.default.strip().lower() != "scripted"
        return self.ballots if ballot and self.ballots else self.default

    def price_of(self, model: str) -> ModelPrice | None:
        return self.prices.get(model.strip())

    def temperature_for(self, role: str) -> float | None:
        return self.temperature.get(role)


class LimitsSettings(_Section):
    max_rounds: int = Field(12, ge=1, le=200)
    max_tokens_per_debate: int = Field(250_000, ge=0, description="0 means no budget")
    max_topic_length: int = Field(300, ge=20, le=2000)
    max_concurrent_debates: int = Field(20, ge=1, description="across the whole bot")
    max_debates_per_scope: int = Field(3, ge=1, description="per Discord server or Slack workspace")
    user_cooldown: int = Field(60, ge=0, description="seconds between debates started by one person")
    max_cost_per_debate: float = Field(0.0, ge=0, description="US dollars; a debate ends cleanly (0: none)")
    daily_cost_per_scope: float = Field(
        0.0, ge=0, description="US dollars per UTC day per server/workspace; new debates refused (0: none)"
    )
    daily_cost_per_process: float = Field(
        0.0, ge=0, description="US dollars per UTC day for this process; new debates refused (0: none)"
    )


class ContextSettings(_Section):
    """How much of the transcript each prompt sees.

    `bounded`: the last few turns verbatim and a capped digest of older ones (flat input, no reuse).
    `transcript`: the turns since the last fold verbatim (at least `recent_turns`, at most
    `recent_turns + window - 1`) after a digest of the older ones, append-only between folds, so
    each prompt extends the one before it and the provider's prompt cache serves the repeated
    prefix (see docs/benchmarks.md for the comparison).
    """

    strategy: Literal["bounded", "transcript"] = "bounded"
    window: int = Field(
        16,
        ge=2,
        le=200,
        description="transcript: turns between the points where older turns fold into the digest",
    )
    recent_turns: int = Field(4, ge=1, le=20)
    max_turn_chars: int = Field(1200, ge=100)
    digest_lines: int = Field(10, ge=0, le=50)
    digest_line_chars: int = Field(160, ge=40)


class ArenaSettings(_Section):
    pool: list[str] = Field(default_factory=list, min_length=2)
    opposition: str
    moderator: str
    duration: int = Field(300, ge=30, le=7200)
    exchanges_per_round: int = Field(3, ge=1, le=10)
    humans: Literal["off", "tiebreak", "vote"] = "tiebreak"
    human_window: int = Field(30, ge=5, le=600)
    vote_context_messages: int = Field(6, ge=2, le=20)


class ResearchSettings(_Section):
    """Web research for oxford's two debaters (agno tools). Off unless configured with a key."""

    enabled: bool = False
    provider: Literal["tavily"] = "tavily"
    max_tool_calls: int = Field(4, ge=1, le=4, description="tool calls per turn, at most 4")
    api_url: str | None = Field(None, description="Tavily API base URL (default: Tavily's own)")


class OxfordSettings(_Section):
    proposer: str = "celeste"
    critic: str = "vera"
    moderator: str = "sol"
    judge: str = "juno"
    max_rounds: int = Field(3, ge=1, le=10, description="rounds before the judge must rule")
    humans: Literal["off", "vote"] = Field(
        "vote", description="audience votes on the motion before and after"
    )
    human_window: int = Field(60, ge=5, le=600, description="seconds for each audience vote")
    research: ResearchSettings = Field(default_factory=ResearchSettings)


class CouncilSeat(_Section):
    persona: str
    weight: float = Field(1.0, gt=0, le=10, description="expertise weight for the weighted strategy")


class CouncilSettings(_Section):
    agents: list[CouncilSeat] = Field(
        default_factory=lambda: [
            CouncilSeat(persona="ada", weight=1.5),
            CouncilSeat(persona="dario", weight=1.2),
            CouncilSeat(persona="esme", weight=1.0),
            CouncilSeat(persona="kit", weight=1.3),
        ],
        min_length=2,
        max_length=6,
    )
    moderator: str | None = "sol"
    rounds: int = Field(2, ge=0, le=5, description="critique-and-revise rounds after the proposals")
    strategy: Literal["majority", "weighted", "consensus", "moderator"] = "majority"
    humans: Literal["off", "tiebreak"] = "tiebreak"
    human_window: int = Field(30, ge=5, le=600)
    proposal_chars: int = Field(600, ge=100, description="each other proposal is trimmed to this in context")
    convergence: float = Field(
        0.6, gt=0, le=1, description="consensus: word overlap at which proposals count as converged"
    )


class PanelSettings(_Section):
    agents: list[str] = Field(default_factory=lambda: ["basil", "rhea", "kit"], min_length=1, max_length=6)
    synthesiser: str = "sol"
    rounds: int = Field(1, ge=0, le=5, description="rounds over the accumulated answers after round 0")
    questions: int = Field(3, ge=1, le=10, description="questions generated from a question document")
    max_document_chars: int = Field(40_000, ge=1000, description="larger documents are refused")
    documents: list[str] = Field(
        default_factory=list, description="default document paths, one per panellist, when none are attached"
    )

    @model_validator(mode="after")
    def _one_document_per_panellist(self) -> PanelSettings:
        # Each panellist's agent holds its own document, so one persona cannot sit twice.
        if len(set(self.agents)) != len(self.agents):
            raise ValueError("formats.panel.agents lists a persona twice")
        if len(self.documents) > len(self.agents):
            raise ValueError(
                f"formats.panel.documents lists {len(self.documents)} documents for"
                f" {len(self.agents)} panellists (one each at most)"
            )
        return self


class FormatsSettings(_Section):
    arena: ArenaSettings
    oxford: OxfordSettings = Field(default_factory=OxfordSettings)
    council: CouncilSettings = Field(default_factory=CouncilSettings)
    panel: PanelSettings = Field(default_factory=PanelSettings)


class StorageSettings(_Section):
    """Where debates are stored, how long a store outage is waited out, and the debate lease."""

    url: str = Field(
        "sqlite:///~/.local/share/rostra/rostra.db",
        description="sqlite:///path/to/file.db (one machine) or postgresql://user:pass@host/db (many)",
    )
    busy_timeout: float = Field(5.0, ge=0.0, le=60.0, description="SQLite: seconds to wait on a lock")
    outage_limit: float = Field(
        120.0, ge=0.0, description="seconds a debate waits out an unavailable store before it is interrupted"
    )
    retry_initial: float = Field(0.2, gt=0.0, le=10.0, description="first retry delay (doubles each time)")
    retry_max: float = Field(5.0, gt=0.0, le=60.0, description="longest delay between retries")
    lease_seconds: float = Field(
        30.0, ge=1.0, le=3600.0, description="a debate whose owner stops renewing is free after this"
    )
    heartbeat_seconds: float = Field(10.0, gt=0.0, le=600.0, description="how often leases are renewed")
    poll_seconds: float = Field(
        1.0, gt=0.0, le=60.0, description="SQLite: how often votes cast in other processes are picked up"
    )

    @model_validator(mode="after")
    def _heartbeat_inside_lease(self) -> StorageSettings:
        if self.heartbeat_seconds * 2 > self.lease_seconds:
            raise ValueError("storage.heartbeat_seconds must be at most half of storage.lease_seconds")
        return self


class CoreSettings(_Section):
    """Everything the engine needs, in one object (built by `bot.config`)."""

    personas: dict[str, Persona]
    formats: FormatsSettings
    model: ModelSettings = Field(default_factory=ModelSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)

    @model_validator(mode="before")
    @classmethod
    def _persona_ids_from_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("personas"), dict):
            personas = {}
            for key, value in data["personas"].items():
                if isinstance(value, dict):
                    value = {"id": key, **value}
                personas[key] = value
            data = {**data, "personas": personas}
        return data

    @model_validator(mode="after")
    def _cast_refers_to_personas(self) -> CoreSettings:
        for key, persona in self.personas.items():
            if persona.id != key:
                raise ValueError(f"persona {key!r} has a different id {persona.id!r}")
        arena = self.formats.arena
        for pid in [*arena.pool, arena.opposition, arena.moderator]:
            if pid not in self.personas:
                raise ValueError(f"formats.arena names persona {pid!r}, which is not in personas")
        if len(set(arena.pool)) != len(arena.pool):
            raise ValueError("formats.arena.pool lists a persona twice")
        if arena.opposition in arena.pool or arena.moderator in arena.pool:
            raise ValueError("formats.arena: the opposition and moderator must not be in the pool")
        f = self.formats
        named = {
            "formats.oxford": [f.oxford.proposer, f.oxford.critic, f.oxford.moderator, f.oxford.judge],
            "formats.council": [seat.persona for seat in f.council.agents]
            + ([f.council.moderator] if f.council.moderator else []),
            "formats.panel": [*f.panel.agents, f.panel.synthesiser],
        }
        for section, ids in named.items():
            for pid in ids:
                if pid not in self.personas:
                    raise ValueError(f"{section} names persona {pid!r}, which is not in personas")
        if len({seat.persona for seat in f.council.agents}) != len(f.council.agents):
            raise ValueError("formats.council.agents lists a persona twice")
        return self
