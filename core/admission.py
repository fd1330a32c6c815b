"""Who may start a debate right now: one per channel, a cap per server/workspace and overall, a
per-user cooldown.

`Admission.admit` is the rule for a bot of many processes: the checks and the claim are one atomic
operation of the store (core.storage.cluster), so every worker gives the same answer and of N
simultaneous starts anywhere at most the limits pass. It is async; the claim it gives is released
(cooldown given back) unless the debate starts:

    claim = await admission.admit(platform=..., scope=..., channel=..., user=...)
    async with claim:
        handle = await manager.start(..., claim=claim.key)  # created only while the claim stands
        claim.started()

Platform permission checks (roles, user groups) stay in the adapters; these rules are the same
everywhere.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from types import TracebackType

from core.clock import Clock
from core.errors import TOO_MANY_DEBATES, AdmissionError, StoreError
from core.manager import DebateManager
from core.ports import AdmissionAsk, ChannelClaim, Claimed, Refused, Store
from core.settings import LimitsSettings

log = logging.getLogger(__name__)


def already_running(topic: str) -> str:
    return f"A debate is already running here ({topic!r}); stop it first or start one in another channel."


STARTING_HERE = "A debate is being started in this channel right now; wait a moment."


def scope_full(count: int, limit: int) -> str:
    return f"This server already has {count} debates running (the limit is {limit}); try again when one ends."


def cooling_down(wait: float) -> str:
    return f"You started a debate moments ago; try again in {math.ceil(wait)} s."


class StartRefused(AdmissionError):
    """The store refused the start; `refused` says why (a front end may word it with a link)."""

    def __init__(self, message: str, refused: Refused) -> None:
        super().__init__(message)
        self.refused = refused


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

    def __init__(
        self,
        store: Store,
        ask: AdmissionAsk,
        claimed: Claimed,
        on_close: Callable[[Claim], None] = lambda _: None,
        owe: Callable[[Claim], None] = lambda _: None,
    ) -> None:
        self._store = store
        self._ask = ask
        self._claimed = claimed
        self._on_close = on_close
        self._owe = owe
        self._open = True

    @property
    def channel(self) -> str:
        return self._ask.channel

    @property
    def key(self) -> ChannelClaim:
        """What the debate is created under (`DebateManager.start`): the store creates it only while
        this claim stands, and the claim then stands for it (ClaimLapsed when it lapsed meanwhile:
        its worker paused past a lease, and another start may hold the channel now)."""
        return ChannelClaim(self._ask.platform, self._ask.channel)

    def started(self) -> None:
        """The debate runs under this claim (linked to it as it was created): nothing to give back;
        the cooldown stays."""
        if self._open:
            self._open = False
            self._on_close(self)

    async def release(self) -> None:
        """The start failed: free the channel and give the person their cooldown back. With the
        store away the claim lapses by itself after a lease, and the cooldown is given back before
        this process's next admission (`owe`)."""
        if self._open:
            self._open = False
            self._on_close(self)
            try:
                await self.give_back()
            except StoreError as exc:
                log.warning(
                    "a refused start in %s is given back once the store answers: %s", self.channel, exc
                )
                self._owe(self)

    async def give_back(self) -> None:
        """Free the channel and restore the person's cooldown (unless a later start holds them).
        Raises StoreError."""
        await self._store.give_back(self._ask, self._claimed)

    async def __aenter__(self) -> Claim:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.release()


class Admission:
    def __init__(self, manager: DebateManager, clock: Clock, limits: LimitsSettings) -> None:
        self._manager = manager
        self._clock = clock
        self._limits = limits
        self._open: set[Claim] = set()
        self._owed: list[Claim] = []  # refused starts the store was away to take back

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
        await self._give_back_owed()
        result = await store.admit(ask)
        if isinstance(result, Refused):
            raise StartRefused(refusal(result, limits), result)
        claim = Claim(store, ask, result, on_close=self._open.discard, owe=self._owed.append)
        self._open.add(claim)
        try:
            await self._manager.spending.check(platform=platform, scope=scope)  # daily budgets (money)
        except BaseException:
            await claim.release()
            raise
        return claim

    async def _give_back_owed(self) -> None:
        """What refused starts still owe: a person's cooldown for a debate that never started would
        refuse their next try. Not while a start of this process holds the same channel (giving back
        frees this worker's pending claim there)."""
        owed, self._owed = self._owed, []
        for n, claim in enumerate(owed):
            if any(c.channel == claim.channel for c in self._open):
                self._owed.append(claim)
                continue
            try:
                await claim.give_back()
            except StoreError:  # still away: the rest wait too (each try would wait as long)
                self._owed.extend(owed[n:])
                return

    def pending(self) -> int:
        """Starts this process has claimed that are neither running nor released yet."""
        return len(self._open)
