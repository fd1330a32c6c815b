"""A debate's spending ceiling, enforced before each model call, never after.

`Ledger` is unit-free: a ceiling, what was spent, what is reserved by calls in flight, and a part
held back for the closing call. A call reserves its worst case first (`reserve`, all-or-nothing
for several at once with `reserve_all`) and settles with what it really used. A call the ceiling
cannot cover is never made: `BudgetExhausted` is raised instead, before anything is shown. The same
ledger can hold another unit (a money ceiling in cents) beside the token one.

`TokenBudget` is the token ledger of one debate: it prices a call at its worst case (the maximum
tokens out for its kind plus an estimate of the prompt, rounded up) and hands out `MeteredAgent`s,
agents that can make exactly one call (retried on failure) within their reservation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from core.errors import DebateError, ModelCallError

if TYPE_CHECKING:
    from core.llm.agents import Decision as DecisionT
    from core.llm.agents import DeltaCallback, PersonaAgent, SpokenTurn
    from core.settings import CoreSettings

T = TypeVar("T", bound=BaseModel)

CHARS_PER_TOKEN = 3
"""Prompt estimate: at most one token per three characters (English runs near four)."""
CALL_OVERHEAD = 64
"""Tokens a call costs beyond its text (message framing, a structured reply's schema note)."""
CLOSING_SHARE = 0.5
"""The closing call gets a reserve only when its worst case fits in this share of the ceiling."""


class BudgetExhausted(DebateError):
    """A model call the budget cannot cover; it was not made."""


@dataclass(eq=False)
class Reservation:
    """Units set aside for one call (or one call and its retry) until it settles."""

    amount: int
    _ledger: Ledger = field(repr=False)
    _open: bool = field(default=True, repr=False)

    def settle(self, used: int) -> None:
        """The call is done: `used` units are spent, the rest of the reservation is free again."""
        if self._open:
            self._open = False
            self._ledger._settle(self, used)

    def release(self) -> None:
        """The call was not made (or failed without a bill)."""
        self.settle(0)


class Ledger:
    """A ceiling (0: none), what is spent, what calls in flight hold, and a reserve held back."""

    def __init__(self, ceiling: int, *, unit: str = "tokens") -> None:
        self.ceiling = ceiling
        self.unit = unit
        self.spent = 0
        self.reserved = 0
        self.held_back = 0

    @property
    def limited(self) -> bool:
        return self.ceiling > 0

    def available(self, *, closing: bool = False) -> int | None:
        """What a new reservation may take (None: no ceiling); `closing` may use the reserve."""
        if not self.limited:
            return None
        left = self.ceiling - self.spent - self.reserved
        return left if closing else left - self.held_back

    def hold_back(self, amount: int) -> None:
        """Set `amount` aside for the closing call (ignored when it would not fit)."""
        self.held_back = amount if self.limited and amount <= self.ceiling else 0

    def covers(self, amount: int, *, closing: bool = False) -> bool:
        left = self.available(closing=closing)
        return left is None or amount <= left

    def reserve(self, amount: int, *, what: str, closing: bool = False) -> Reservation:
        return self.reserve_all([amount], what=what, closing=closing)[0]

    def reserve_all(self, amounts: Sequence[int], *, what: str, closing: bool = False) -> list[Reservation]:
        """Reserve for several calls at once, or for none (raises BudgetExhausted)."""
        total = sum(amounts)
        if not self.covers(total, closing=closing):
            left = max(0, self.available(closing=closing) or 0)
            raise BudgetExhausted(
                f"the budget of {self.ceiling:,} {self.unit} cannot cover {what}"
                f" (up to {total:,} {self.unit}; {left:,} left)"
            )
        self.reserved += total
        return [Reservation(amount, self) for amount in amounts]

    def force(self, amount: int) -> Reservation:
        """A reservation that is not checked (a call the stored log shows was made)."""
        self.reserved += amount
        return Reservation(amount, self)

    def _settle(self, reservation: Reservation, used: int) -> None:
        self.reserved -= reservation.amount
        self.spent += max(0, used)


@dataclass(frozen=True)
class CallPlan:
    """One call to price: who, in which role and kind, with which instructions and prompt."""

    kind: str
    system: str
    prompt: str
    calls: int = 1
    """Model calls one run may make (research tools add a call per tool use)."""


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class TokenBudget:
    """The token ceiling of one debate (`limits.max_tokens_per_debate`)."""

    def __init__(self, settings: CoreSettings, *, replaying: Callable[[], bool] | None = None) -> None:
        self.settings = settings
        self.ledger = Ledger(settings.limits.max_tokens_per_debate)
        self._replaying = replaying

    def worst_case(self, plan: CallPlan) -> int:
        out = self.settings.model.max_tokens.get(plan.kind, 600)
        prompt = estimate_tokens(plan.system) + estimate_tokens(plan.prompt) + CALL_OVERHEAD
        # each further call of a run (after a tool use) sees the prompt and what came before
        return plan.calls * (out + prompt) + (plan.calls - 1) * out

    def closing_worst_case(self, system: str = "") -> int:
        """A closing call's worst case: its kind's output and the largest context a prompt holds."""
        c = self.settings.context
        context_chars = c.recent_turns * c.max_turn_chars + c.digest_lines * c.digest_line_chars
        return self.worst_case(CallPlan("summary", system, "x" * (context_chars + 2000)))

    def set_aside_for_closing(self, system: str = "") -> None:
        """Hold back the closing call's worst case when it fits in a fair share of the ceiling."""
        need = self.closing_worst_case(system)
        ceiling = self.ledger.ceiling
        self.ledger.hold_back(need if need <= ceiling * CLOSING_SHARE else 0)

    def spent(self) -> bool:
        """No further ordinary call fits (the smallest one's output alone would not)."""
        left = self.ledger.available()
        return left is not None and left < min(self.settings.model.max_tokens.values(), default=1)

    def reserve(self, plans: Sequence[CallPlan], *, what: str, closing: bool = False) -> list[Reservation]:
        amounts = [self.worst_case(p) for p in plans]
        if self._replaying is not None and self._replaying():  # these calls were made before
            return [self.ledger.force(a) for a in amounts]
        return self.ledger.reserve_all(amounts, what=what, closing=closing)

    def metered(
        self, agents: Sequence[PersonaAgent], plans: Sequence[CallPlan], *, what: str, closing: bool = False
    ) -> list[MeteredAgent]:
        """Agents whose next call is reserved now, all of them or none (raises BudgetExhausted)."""
        reservations = self.reserve(plans, what=what, closing=closing)
        return [
            MeteredAgent(a, r, self, p, what, closing)
            for a, r, p in zip(agents, reservations, plans, strict=True)
        ]


class MeteredAgent:
    """An agent with its next call reserved. Each speak or decide settles its reservation with
    what the call used (a failed call releases it); a further call (a retry) reserves again."""

    def __init__(
        self,
        agent: PersonaAgent,
        reservation: Reservation,
        budget: TokenBudget,
        plan: CallPlan,
        what: str,
        closing: bool = False,
    ) -> None:
        self.agent = agent
        self.label = agent.label
        self._reservation: Reservation | None = reservation
        self._budget = budget
        self._plan = plan
        self._what = what
        self._closing = closing

    def next_call_failed_before(self) -> bool:
        return self.agent.next_call_failed_before()

    def _take(self) -> Reservation:
        reservation = self._reservation
        if reservation is None:  # raises BudgetExhausted when a further call no longer fits
            [reservation] = self._budget.reserve([self._plan], what=self._what, closing=self._closing)
        self._reservation = None
        return reservation

    async def speak(self, prompt: str, on_delta: DeltaCallback) -> SpokenTurn:
        reservation = self._take()
        try:
            spoken = await self.agent.speak(prompt, on_delta)
        except BaseException:
            reservation.release()
            raise
        reservation.settle(spoken.usage.total)
        return spoken

    async def decide(self, prompt: str, schema: type[T]) -> DecisionT[T]:
        reservation = self._take()
        try:
            decision = await self.agent.decide(prompt, schema)
        except BaseException:
            reservation.release()
            raise
        reservation.settle(decision.usage.total)
        return decision

    async def consult(self, prompt: str, schema: type[T]) -> DecisionT[T] | str:
        """`decide`, or the reason it failed."""
        try:
            return await self.decide(prompt, schema)
        except BudgetExhausted:
            raise
        except Exception as exc:  # every failure is reported the same way: by its reason
            return exc.reason if isinstance(exc, ModelCallError) else str(exc) or type(exc).__name__

    def release(self) -> None:
        """The reserved call will not be made."""
        if self._reservation is not None:
            self._reservation.release()
            self._reservation = None
