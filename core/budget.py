"""A debate's spending ceilings, enforced before each model call, never after.

`Ledger` is unit-free: a ceiling, what was spent, what is reserved by calls in flight, and a part
held back for the closing call. A call reserves its worst case first (`reserve`, all-or-nothing
for several at once with `reserve_all`) and settles with what it really used. A call the ceiling
cannot cover is never made: `BudgetExhausted` is raised instead, before anything is shown.

`DebateBudget` holds the two ledgers of one debate, tokens (`limits.max_tokens_per_debate`) and
money in millionths of a dollar (`limits.max_cost_per_debate`). It prices a call at its worst case
in both (the maximum tokens out for its kind plus an estimate of the prompt, rounded up; in money
the prompt at the dearest input rate of the call's model, cache writes included, and the output at
its output rate), reserves in both or in neither, and hands out `MeteredAgent`s, agents that can
make exactly one call (retried on failure) within their reservation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from core.errors import DebateError, ModelCallError
from core.models import TokenUsage
from core.pricing import format_cost
from core.token_estimate import estimate_tokens

if TYPE_CHECKING:
    from core.llm.agents import Decision as DecisionT
    from core.llm.agents import DeltaCallback, PersonaAgent, SpokenTurn
    from core.settings import CoreSettings, ModelPrice

T = TypeVar("T", bound=BaseModel)

CALL_OVERHEAD = 64
"""Tokens a call costs beyond its text (message framing, a structured reply's schema note)."""
CLOSING_SHARE = 0.5
"""The closing call gets a reserve only when its worst case fits in this share of the ceiling."""
MICRO = 1_000_000
"""The money ledger counts millionths of a US dollar (a price per million tokens times tokens)."""


class BudgetExhausted(DebateError):
    """A model call the budget cannot cover; it was not made. `budget` names which: token or cost."""

    def __init__(self, message: str, *, budget: str = "token") -> None:
        super().__init__(message)
        self.budget = budget


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
    """A ceiling (0: none), what is spent, what calls in flight hold, and a reserve held back.

    `name` says which budget it is in messages ("token", "cost"); `show` writes an amount of its unit.
    """

    def __init__(
        self,
        ceiling: int,
        *,
        unit: str = "tokens",
        name: str = "token",
        show: Callable[[int], str] | None = None,
    ) -> None:
        self.ceiling = ceiling
        self.unit = unit
        self.name = name
        self.show: Callable[[int], str] = show or (lambda amount: f"{amount:,} {unit}")
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

    def check(self, amounts: Sequence[int], *, what: str, closing: bool = False, then: int = 0) -> None:
        """Raise BudgetExhausted unless the calls' worst cases all fit together, leaving `then` for a
        call that must follow them."""
        total = sum(amounts) + then
        if not self.covers(total, closing=closing):
            left = max(0, self.available(closing=closing) or 0)
            raise BudgetExhausted(
                f"the {self.name} budget of {self.show(self.ceiling)} cannot cover {what}"
                f" (up to {self.show(total)}; {self.show(left)} left)",
                budget=self.name,
            )

    def reserve_all(self, amounts: Sequence[int], *, what: str, closing: bool = False) -> list[Reservation]:
        """Reserve for several calls at once, or for none (raises BudgetExhausted)."""
        self.check(amounts, what=what, closing=closing)
        self.reserved += sum(amounts)
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


def micro_dollars(usd: float) -> int:
    """A cost for the money ledger, rounded up (what is settled is never less than what was spent)."""
    return math.ceil(usd * MICRO) if usd > 0 else 0


@dataclass(eq=False)
class CallReservation:
    """One call's reservations, in tokens and in money, settled together with the call's usage."""

    tokens: Reservation
    money: Reservation

    def settle(self, usage: TokenUsage) -> None:
        self.tokens.settle(usage.total)
        self.money.settle(micro_dollars(usage.cost_usd))

    def release(self) -> None:
        self.settle(TokenUsage())


class DebateBudget:
    """The ceilings of one debate: tokens and money, one ledger each; a call reserves in both."""

    def __init__(self, settings: CoreSettings, *, replaying: Callable[[], bool] | None = None) -> None:
        self.settings = settings
        limits = settings.limits
        self.tokens = Ledger(limits.max_tokens_per_debate)
        # rounded down, so what is spent stays within the configured dollars (and at least one
        # millionth, so that a budget set below that is still a ceiling, not "none")
        dollars = limits.max_cost_per_debate
        self.money = Ledger(
            max(1, math.floor(dollars * MICRO)) if dollars > 0 else 0,
            unit="USD",
            name="cost",
            show=lambda amount: format_cost(amount / MICRO),
        )
        self.refused: Ledger | None = None
        """The ledger that last refused a call."""
        self._replaying = replaying

    @property
    def ledgers(self) -> tuple[Ledger, Ledger]:
        return self.tokens, self.money

    @property
    def limited(self) -> bool:
        """Whether either ceiling is set (with none, every call fits and nothing need be priced)."""
        return self.tokens.limited or self.money.limited

    def _split(self, plan: CallPlan) -> tuple[int, int]:
        """A call's worst case as (tokens in, tokens out)."""
        out = self.settings.model.max_tokens.get(plan.kind, 600)
        prompt = estimate_tokens(plan.system) + estimate_tokens(plan.prompt) + CALL_OVERHEAD
        # each further call of a run (after a tool use) sees the prompt and what came before
        return plan.calls * prompt + (plan.calls - 1) * out, plan.calls * out

    def worst_case(self, plan: CallPlan) -> int:
        """Tokens the call can use at most."""
        tokens_in, tokens_out = self._split(plan)
        return tokens_in + tokens_out

    def worst_cost(self, plan: CallPlan, price: ModelPrice | None) -> int:
        """Millionths of a dollar the call can cost at most: every input token at the model's
        dearest input rate (a cache write usually), every output token at its output rate.
        A model without a price costs nothing here, as in the recorded costs."""
        if price is None:
            return 0
        tokens_in, tokens_out = self._split(plan)
        rate_in = max(price.input, price.cache_write, price.cache_read)
        return math.ceil(tokens_in * rate_in + tokens_out * price.output)

    def closing_plan(self, system: str) -> CallPlan:
        """A closing call: its kind's output and the largest context a prompt holds."""
        c = self.settings.context
        context_chars = c.recent_turns * c.max_turn_chars + c.digest_lines * c.digest_line_chars
        return CallPlan("summary", system, "x" * (context_chars + 2000))

    def set_aside_for_closing(self, system: str = "", price: ModelPrice | None = None) -> None:
        """Hold back the closing call's worst case, in each ledger where it fits in a fair share of
        the ceiling (elsewhere the closing call may be refused: the debate then ends unsummarised)."""
        plan = self.closing_plan(system)
        needs = ((self.tokens, self.worst_case(plan)), (self.money, self.worst_cost(plan, price)))
        for ledger, need in needs:
            ledger.hold_back(need if need <= ledger.ceiling * CLOSING_SHARE else 0)

    def _floor(self, ledger: Ledger) -> int:
        """The least an ordinary call can cost in this ledger (its output alone, at the lowest rate)."""
        m = self.settings.model
        least_out = min(m.max_tokens.values(), default=1)
        if ledger is self.tokens:
            return least_out
        rates = [p.output for p in m.prices.values()]
        return math.floor(least_out * min(rates)) if rates else 0

    def spent_ledger(self) -> Ledger | None:
        """The first ledger in which no further ordinary call fits, if any."""
        for ledger in self.ledgers:
            left = ledger.available()
            if left is not None and left < self._floor(ledger):
                return ledger
        return None

    def spent(self) -> bool:
        """No further ordinary call fits in one of the ceilings."""
        return self.spent_ledger() is not None

    def note(self) -> str:
        """Which budget ran out, for the closing line: "the token budget of 250,000 was spent"."""
        ledger = self.spent_ledger() or self.refused or self.tokens
        if ledger is self.money:
            return f"the cost budget of {format_cost(self.settings.limits.max_cost_per_debate)} was spent"
        return f"the token budget of {self.settings.limits.max_tokens_per_debate:,} was spent"

    def reserve(
        self,
        plans: Sequence[CallPlan],
        prices: Sequence[ModelPrice | None],
        *,
        what: str,
        closing: bool = False,
        then: Sequence[tuple[CallPlan, ModelPrice | None]] = (),
    ) -> list[CallReservation]:
        """Reserve the calls' worst cases in both ledgers, all of them or none (BudgetExhausted).

        `then` lists the candidates for a call that must still fit once these are made (the turn of
        whoever a vote puts on the floor): the dearest of them is checked, not held."""
        tokens = [self.worst_case(p) for p in plans]
        money = [self.worst_cost(p, price) for p, price in zip(plans, prices, strict=True)]
        after = (
            max((self.worst_case(p) for p, _ in then), default=0),
            max((self.worst_cost(p, price) for p, price in then), default=0),
        )
        if self._replaying is not None and self._replaying():  # these calls were made before
            forced = zip(tokens, money, strict=True)
            return [CallReservation(self.tokens.force(t), self.money.force(m)) for t, m in forced]
        for ledger, amounts, later in ((self.tokens, tokens, after[0]), (self.money, money, after[1])):
            try:
                ledger.check(amounts, what=what, closing=closing, then=later)
            except BudgetExhausted:
                self.refused = ledger
                raise
        return [
            CallReservation(t, m)
            for t, m in zip(
                self.tokens.reserve_all(tokens, what=what, closing=closing),
                self.money.reserve_all(money, what=what, closing=closing),
                strict=True,
            )
        ]

    def metered(
        self,
        agents: Sequence[PersonaAgent],
        plans: Sequence[CallPlan],
        *,
        what: str,
        closing: bool = False,
        then: Sequence[tuple[CallPlan, ModelPrice | None]] = (),
    ) -> list[MeteredAgent]:
        """Agents whose next call is reserved now, all of them or none (raises BudgetExhausted).
        Each call is priced at its agent's model (ballots may use a cheaper one than speeches)."""
        prices = [a.price for a in agents]
        reservations = self.reserve(plans, prices, what=what, closing=closing, then=then)
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
        reservation: CallReservation,
        budget: DebateBudget,
        plan: CallPlan,
        what: str,
        closing: bool = False,
    ) -> None:
        self.agent = agent
        self.label = agent.label
        self._reservation: CallReservation | None = reservation
        self._budget = budget
        self._plan = plan
        self._what = what
        self._closing = closing

    def next_call_failed_before(self) -> bool:
        return self.agent.next_call_failed_before()

    def _take(self) -> CallReservation:
        reservation = self._reservation
        if reservation is None:  # raises BudgetExhausted when a further call no longer fits
            [reservation] = self._budget.reserve(
                [self._plan], [self.agent.price], what=self._what, closing=self._closing
            )
        self._reservation = None
        return reservation

    async def speak(self, prompt: str, on_delta: DeltaCallback) -> SpokenTurn:
        reservation = self._take()
        try:
            spoken = await self.agent.speak(prompt, on_delta)
        except BaseException:
            reservation.release()
            raise
        reservation.settle(spoken.usage)
        return spoken

    async def decide(self, prompt: str, schema: type[T]) -> DecisionT[T]:
        reservation = self._take()
        try:
            decision = await self.agent.decide(prompt, schema)
        except BaseException:
            reservation.release()
            raise
        reservation.settle(decision.usage)
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
