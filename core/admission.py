"""Who may start a debate right now: one per channel, a cap per server/workspace and overall, a
per-user cooldown.

`Admission.admit` is the rule for a bot of many processes: the checks and the claim are one atomic
operation of the store (core.storage.cluster), so every worker gives the same answer and of N
simultaneous starts anywhere at most the limits pass. It is async; the claim it gives is released
(cooldown given back) unless the debate starts:

    claim = await admission.admit(platform=..., scope=..., channel=..., user=...)
    async with claim:
        handle = await start(...)
        await claim.started(handle.debate_id)

`Admission.reserve` is the former rule, counted inside this process only; it stays, unchanged, for
the front ends until they call `admit`. A start takes a `Slot` with `Admission.reserve`,
synchronously, before anything awaits: the slot counts against every limit at once (so N
simultaneous starts cannot all pass a check that only later records them) and starts the person's
cooldown. The front end marks the slot `started()` once
the debate runs (from then on the running debate itself counts), or leaves it, which releases it and
gives the cooldown back. Use it as a context manager so a failed start always releases:

    with admission.reserve(platform=..., scope=..., channel=..., user=...) as slot:
        handle = await start(...)
        slot.started()

Platform permission checks (roles, user groups) stay in the adapters; these rules are the same
everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import TracebackType

from core.clock import Clock
from core.errors import TOO_MANY_DEBATES, AdmissionError
from core.manager import DebateManager
from core.ports import AdmissionAsk, Claimed, Refused, Store
from core.settings import LimitsSettings


def already_running(topic: str) -> str:
    return f"A debate is already running here ({topic!r}); stop it first or start one in another channel."


STARTING_HERE = "A debate is being started in this channel right now; wait a moment."


def scope_full(count: int, limit: int) -> str:
    return f"This server already has {count} debates running (the limit is {limit}); try again when one ends."


def cooling_down(wait: float) -> str:
    return f"You started a debate moments ago; try again in {math.ceil(wait)} s."


def refusal(refused: Refused, limits: LimitsSettings) -> str:
    """What the person is told, the same words whichever worker refused."""
    if refused.why == "running":
        return already_running(refused.topic)
    if refused.why == "starting":
        return STARTING_HERE
    if refused.why == "scope":
        return scope_full(refused.count, limits.max_debates_per_scope)
    if refused.why == "total":
        return TOO_MANY_DEBATES
    return cooling_down(refused.wait)


class Claim:
    """A start admitted by the store, counted against every limit in every process until its debate
    runs (`started`) or it is released. A worker that dies holding one: it lapses after a lease."""

    def __init__(self, store: Store, ask: AdmissionAsk, claimed: Claimed) -> None:
        self._store = store
        self._ask = ask
        self._claimed = claimed
        self._open = True

    @property
    def channel(self) -> str:
        return self._ask.channel

    async def started(self, debate_id: str) -> None:
        """The debate runs: from now on it counts itself, and it is found by this claim's channel
        too (a Discord thread's parent channel, say). The cooldown stays."""
        if self._open:
            self._open = False
            await self._store.claim_started(self._ask.platform, self._ask.channel, debate_id)

    async def release(self) -> None:
        """The start failed: free the channel and give the person their cooldown back."""
        if self._open:
            self._open = False
            await self._store.give_back(self._ask, self._claimed)

    async def __aenter__(self) -> Claim:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.release()


@dataclass(eq=False)
class Slot:
    """A start in progress, counted against every limit until it has started or is released."""

    platform: str
    scope: str
    channel: str
    user: str
    _admission: Admission = field(repr=False)
    _previous_start: float | None = field(repr=False)
    _at: float = field(repr=False)
    _open: bool = field(default=True, repr=False)

    def started(self) -> None:
        """The debate runs (and counts itself from now on); the cooldown stays."""
        if self._open:
            self._open = False
            self._admission._pending.discard(self)

    def release(self) -> None:
        """The start failed: free the slot and give the person their cooldown back."""
        if self._open:
            self._open = False
            self._admission._give_back(self)

    def __enter__(self) -> Slot:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


class Admission:
    def __init__(self, manager: DebateManager, clock: Clock, limits: LimitsSettings) -> None:
        self._manager = manager
        self._clock = clock
        self._limits = limits
        self._last_start: dict[tuple[str, str], float] = {}
        self._pending: set[Slot] = set()

    async def admit(self, *, platform: str, scope: str, channel: str, user: str) -> Claim:
        """Claim a start in the store, or raise AdmissionError (with a message for the person).

        Atomic across every process sharing the store: the channel's running debate (or a start
        pending there), the per-scope and bot-wide caps and the person's cooldown are checked and
        the claim is taken in one transaction. Raises StoreError when the store cannot answer."""
        limits = self._limits
        ask = AdmissionAsk(
            platform=platform,
            scope=scope,
            channel=channel,
            person=user,
            max_per_scope=limits.max_debates_per_scope,
            max_total=limits.max_concurrent_debates,
            cooldown=float(limits.user_cooldown),
        )
        store = self._manager.store
        result = await store.admit(ask)
        if isinstance(result, Refused):
            raise AdmissionError(refusal(result, limits))
        claim = Claim(store, ask, result)
        try:
            self._manager.spending.check(platform=platform, scope=scope)  # daily budgets (core.spending)
        except BaseException:
            await claim.release()
            raise
        return claim

    def reserve(self, *, platform: str, scope: str, channel: str, user: str) -> Slot:
        """Take a slot for a start, or raise AdmissionError (with a message for the person).

        Synchronous on purpose: the check and the reservation happen with no await in between.
        """
        self._check(platform=platform, scope=scope, channel=channel, user=user)
        key = (platform, user)
        now = self._clock.now()
        slot = Slot(platform, scope, channel, user, self, self._last_start.get(key), now)
        self._last_start[key] = now
        self._pending.add(slot)
        return slot

    def pending(self) -> int:
        """Starts reserved and not yet running or released."""
        return len(self._pending)

    def _check(self, *, platform: str, scope: str, channel: str, user: str) -> None:
        existing = self._manager.find(platform=platform, channel=channel)
        if existing is not None:
            raise AdmissionError(already_running(existing.spec.topic))
        if any(s.platform == platform and s.channel == channel for s in self._pending):
            raise AdmissionError(STARTING_HERE)
        running = self._manager.running()
        in_scope = [h for h in running if h.binding.platform == platform and h.binding.scope == scope]
        starting = [s for s in self._pending if s.platform == platform and s.scope == scope]
        if len(in_scope) + len(starting) >= self._limits.max_debates_per_scope:
            raise AdmissionError(
                scope_full(len(in_scope) + len(starting), self._limits.max_debates_per_scope)
            )
        if len(running) + len(self._pending) >= self._limits.max_concurrent_debates:
            raise AdmissionError(TOO_MANY_DEBATES)
        self._manager.spending.check(platform=platform, scope=scope)  # daily budgets in money (core.spending)
        last = self._last_start.get((platform, user))
        if last is not None:
            wait = self._limits.user_cooldown - (self._clock.now() - last)
            if wait > 0:
                raise AdmissionError(cooling_down(wait))

    def _give_back(self, slot: Slot) -> None:
        self._pending.discard(slot)
        key = (slot.platform, slot.user)
        if self._last_start.get(key) != slot._at:
            return  # a later start by the same person holds the cooldown now
        if slot._previous_start is None:
            self._last_start.pop(key, None)
        else:
            self._last_start[key] = slot._previous_start
