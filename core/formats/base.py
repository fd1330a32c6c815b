"""What every format gets from the session (`DebateContext`) and what it must provide."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from core.budget import CallPlan, DebateBudget, MeteredAgent
from core.clock import Clock, DebateClock
from core.events import CompletionReason, Emit
from core.llm.registry import CallKind, DebateModels
from core.models import Persona
from core.replay import Replay
from core.settings import CoreSettings, ResearchSettings
from core.state import DebateState
from core.voting import HumanBallots


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
    emit: Emit
    """Stamps and emits events for the debate (store first, then the sink); gives each back stamped."""
    ballots: HumanBallots
    replay: Replay | None = None
    budget: DebateBudget = field(init=False)
    """The token and cost ceilings: every model call is reserved here before it is made (core.budget)."""

    def __post_init__(self) -> None:
        self.budget = DebateBudget(self.settings, replaying=self._replaying)

    def _replaying(self) -> bool:
        return self.replay is not None and self.replay.active

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
        """No further ordinary model call fits in the token budget or in the cost budget."""
        return self.budget.spent()

    def budget_note(self) -> str:
        """Which budget ran out, for the closing line: "the cost budget of $0.5000 was spent"."""
        return self.budget.note()

    def set_aside_for_closing(self, role: str, kind: CallKind, system: str) -> None:
        """Hold back the closing call's worst case (tokens, and money at the model it will use)."""
        self.budget.set_aside_for_closing(system, self.models.price(role, kind))

    def metered(
        self,
        persona: Persona,
        role: str,
        kind: CallKind,
        system: str,
        prompt: str,
        *,
        closing: bool = False,
        research: ResearchSettings | None = None,
    ) -> MeteredAgent:
        """The agent for one call, its worst case reserved now (raises BudgetExhausted)."""
        agent = self.models.agent(persona, role, kind, system, research=research)
        calls = 1 + (research.max_tool_calls if research is not None else 0)
        plan = CallPlan(kind, system, prompt, calls)
        what = f"{persona.name}'s {kind} as {role}"
        [metered] = self.budget.metered([agent], [plan], what=what, closing=closing)
        return metered

    def metered_all(
        self,
        calls: Sequence[MeteredCall],
        *,
        what: str,
        closing: bool = False,
        then: Callable[[], Sequence[MeteredCall]] | None = None,
    ) -> list[MeteredAgent]:
        """Agents for calls made together (parallel votes, turns): all reserved now, or none.

        `then` gives the candidates for a call that must still fit after these (see
        DebateBudget.reserve); it is asked only when a ceiling is set, since it costs a prompt."""
        agents = [self.models.agent(c.persona, c.role, c.kind, c.system, research=c.research) for c in calls]
        follows = (
            [(_plan(c), self.models.price(c.role, c.kind)) for c in then()]
            if then is not None and self.budget.limited
            else []
        )
        return self.budget.metered(
            agents, [_plan(c) for c in calls], what=what, closing=closing, then=follows
        )


@dataclass(frozen=True)
class MeteredCall:
    """One of several calls made together (see `DebateContext.metered_all`)."""

    persona: Persona
    role: str
    kind: CallKind
    system: str
    prompt: str
    research: ResearchSettings | None = None


def _plan(call: MeteredCall) -> CallPlan:
    return CallPlan(
        call.kind, call.system, call.prompt, 1 + (call.research.max_tool_calls if call.research else 0)
    )


@dataclass(frozen=True)
class Outcome:
    reason: CompletionReason
    detail: str = ""
    summary: str = ""


class DebateFormat(ABC):
    """A debate format: drives turns, votes and the clock, and emits events through `ctx.emit`."""

    name: ClassVar[str]
    writes_files: ClassVar[bool] = False
    """Whether the format hands out a file to save (a front end checks it can, before starting)."""
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
