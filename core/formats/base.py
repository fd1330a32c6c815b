"""What every format gets from the session (`DebateContext`) and what it must provide."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from core.clock import Clock, DebateClock
from core.events import CompletionReason, Event
from core.llm.registry import DebateModels
from core.models import Persona
from core.pricing import format_cost
from core.replay import Replay
from core.settings import CoreSettings
from core.state import DebateState
from core.voting import HumanBallots

E = TypeVar("E", bound=Event)


class Emitter:
    """Stamps and emits events for one debate (store first, then the sink)."""

    def __init__(self, emit: Callable[[Any], Awaitable[Any]]) -> None:
        self._emit = emit

    async def __call__(self, event: E) -> E:
        stamped: E = await self._emit(event)
        return stamped


@dataclass
class DebateContext:
    debate_id: str
    topic: str
    seed: int
    settings: CoreSettings
    models: DebateModels
    clock: Clock
    debate_clock: DebateClock
    state: DebateState
    emit: Emitter
    ballots: HumanBallots
    replay: Replay | None = None

    @property
    def personas(self) -> dict[str, Persona]:
        return self.settings.personas

    def rng(self, *key: object) -> random.Random:
        """A random source for one decision, derived from the seed and the decision's name.

        Deriving per decision (not one shared stream) keeps a resumed debate on the same path.
        """
        return random.Random("|".join([str(self.seed), *map(str, key)]))

    def next_turn_id(self) -> str:
        return f"t{len(self.state.turn_ids) + 1}"

    def budget_spent(self) -> bool:
        budget = self.settings.limits.max_tokens_per_debate
        money = self.settings.limits.max_cost_per_debate  # US dollars (core.pricing)
        return (budget > 0 and self.state.tokens.total >= budget) or (
            money > 0 and self.state.tokens.cost_usd >= money
        )

    def budget_note(self) -> str:
        """Which budget ran out, for the closing line: "the token budget of 250,000 was spent"."""
        tokens = self.settings.limits.max_tokens_per_debate
        if tokens > 0 and self.state.tokens.total >= tokens:
            return f"the token budget of {tokens:,} was spent"
        return f"the cost budget of {format_cost(self.settings.limits.max_cost_per_debate)} was spent"


@dataclass(frozen=True)
class Outcome:
    reason: CompletionReason
    detail: str = ""
    summary: str = ""


class DebateFormat(ABC):
    """A debate format: drives turns, votes and the clock, and emits events through `ctx.emit`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Options: ClassVar[type[BaseModel]]

    def __init__(self, ctx: DebateContext, options: BaseModel) -> None:
        self.ctx = ctx
        self.options = options

    @classmethod
    @abstractmethod
    def parse_options(cls, settings: CoreSettings, given: dict[str, Any]) -> BaseModel:
        """Config defaults overlaid with the request; raises SpecError with a readable message."""

    @classmethod
    @abstractmethod
    def roles(cls) -> list[str]:
        """Roles that make model calls (each may have its own model in config)."""

    @classmethod
    def uses_research(cls, settings: CoreSettings) -> bool:
        """Whether this format's debaters get web research tools under these settings."""
        return False

    @classmethod
    def duration(cls, options: BaseModel) -> float | None:
        """Debate-time limit in seconds, or None for formats that end by rounds."""
        return None

    @abstractmethod
    async def run(self) -> Outcome:
        """Run the debate to its end and say how it ended. DebateCompleted is emitted by the session."""
