"""The small protocols through which the core talks outward: sinks and the store."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from core.events import Event

DebateStatus = Literal["running", "completed", "stopped", "interrupted", "failed"]


class EventSink(Protocol):
    """Where a debate's events go once stored (a front end, a test recorder)."""

    async def emit(self, event: Event) -> None: ...


class Binding(BaseModel):
    """Where a debate lives on a platform, so it can be found (one per channel) and resumed."""

    model_config = ConfigDict(frozen=True)

    platform: str = "terminal"
    scope: str = ""
    channel: str = ""
    started_by: str = ""


class DebateRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    format: str
    topic: str
    spec: dict[str, Any]
    status: DebateStatus
    reason: str = ""
    binding: Binding = Field(default_factory=Binding)
    created_at: datetime
    updated_at: datetime
    owner: str = ""
    lease_until: float = 0.0

    def leased_by_other(self, owner: str, now: float) -> bool:
        """Another live owner holds this debate's lease (epoch seconds `now`)."""
        return bool(self.owner) and self.owner != owner and self.lease_until > now and owner_alive(self.owner)


def owner_alive(owner: str) -> bool:
    """False when the owner is a process on this machine that has exited (its lease is void).

    Owner ids are `instance:pid:token`. A process elsewhere cannot be checked: its lease runs out.
    """
    host, _, rest = owner.partition(":")
    pid_text, _, token = rest.partition(":")
    if host != instance_name() or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    if pid == os.getpid():
        return token in LIVE_OWNERS
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


LIVE_OWNERS: set[str] = set()
"""The tokens of the stores open in this process (a closed store's leases are void at once)."""


def instance_name() -> str:
    """This machine in owner ids: $ROSTRA_INSTANCE, else the host name (containers: one each)."""
    return (os.environ.get("ROSTRA_INSTANCE") or socket.gethostname()).replace(":", "-")


def new_owner_id() -> str:
    token = secrets.token_hex(4)
    LIVE_OWNERS.add(token)
    return f"{instance_name()}:{os.getpid()}:{token}"


def retire_owner_id(owner: str) -> None:
    LIVE_OWNERS.discard(owner.rsplit(":", 1)[-1])


@dataclass(frozen=True)
class AdmissionAsk:
    """A start asking to be admitted, with the limits it is held to (see core.admission)."""

    platform: str
    scope: str
    channel: str
    person: str
    max_per_scope: int
    max_total: int
    cooldown: float


BindingValues = Mapping[str, str]
"""Where a debate lives on its platform (thread, messages), kept with it for a restart (bindings)."""


@dataclass(frozen=True)
class ChannelClaim:
    """An admitted start's claim on its channel (`Store.admit`), which its debate is created under."""

    platform: str
    channel: str


@dataclass(frozen=True)
class Claimed:
    """Admitted: the channel's claim is taken and the person's cooldown runs from `at` (epoch
    seconds); `previous_start` is what the cooldown held before (given back if the start fails)."""

    at: float
    previous_start: float | None


@dataclass(frozen=True)
class Refused:
    """Not admitted, and why: a debate `running` in the channel (its `topic`, and the `channel` it is
    bound to: the thread it runs in, on Discord), one `starting` there, the `scope` or `total` cap
    reached (`count` counted), or the person's `cooldown` (`wait` s left)."""

    why: Literal["running", "starting", "scope", "total", "cooldown"]
    topic: str = ""
    channel: str = ""
    count: int = 0
    wait: float = 0.0


class Store(Protocol):
    """An append-only event log per debate plus a table of debates, shared by any number of processes.

    Every write is committed before the call returns (appends queued together may share one
    transaction, each checked on its own): what a caller hands on afterwards is stored. A transient
    fault raises StoreUnavailable (nothing was written; retry). Each debate has one owner at a time:
    a lease that `acquire` takes with a new fencing token and a heartbeat renews. Every write to a
    debate carries that token and raises LeaseLost in a process whose token is no longer current,
    even when nobody owns the debate now.

    What the workers of one bot must agree on lives here too, as atomic operations (see
    core.storage.cluster): admission claims and cooldowns, inbound delivery keys, live workers.
    """

    @property
    def owner(self) -> str:
        """This store's owner id (`host:pid:token`), the holder of the leases it takes."""
        ...

    async def acquire(self, debate_id: str) -> bool:
        """Take the debate's lease if it is free, expired, ours, or held by a dead local process."""
        ...

    async def release(self, debate_id: str) -> None:
        """Give the lease up (the debate ended or this process stops)."""
        ...

    async def still_held(self, debate_id: str) -> bool:
        """Whether this process may still show the debate on a platform (writes are fenced by the
        store; what a platform shows is not): False once another process has taken it. After a
        pause longer than the lease it asks the store before answering."""
        ...

    def when_taken(self, debate_id: str, taken: Callable[[], None]) -> None:
        """Call `taken()` once, when this store finds the debate taken over by another process (its
        heartbeat's renewal or a refused write); forgotten when this store gives the debate up."""
        ...

    async def post_vote(self, debate_id: str, payload: str) -> None:
        """Leave a human vote or a control (a stop) for the debate's owner (any process may; it is not
        fenced); stored before it returns, so the owner takes it even if its notification is lost."""
        ...

    async def take_votes(self, debate_id: str) -> list[str]:
        """The votes left for a debate this process owns, oldest first, removed as they are taken."""
        ...

    async def waiting_votes(self, debate_id: str) -> list[str]:
        """The votes and controls left for a debate, oldest first, none removed (any process may look)."""
        ...

    async def wait_for_votes(self) -> None:
        """Return when votes may have been posted (a notification, or after a poll interval)."""
        ...

    # --- one bot over many processes (core.storage.cluster) --------------------------------------

    async def admit(self, ask: AdmissionAsk) -> Claimed | Refused:
        """Check every admission limit and take the channel's claim, atomically across processes."""
        ...

    async def give_back(self, ask: AdmissionAsk, claimed: Claimed) -> None:
        """A start that failed: its claim removed, the person's cooldown as it was before."""
        ...

    async def find_running(self, platform: str, channel: str) -> DebateRecord | None:
        """The debate running in the channel (or started from it), whichever process runs it."""
        ...

    async def first_delivery(self, key: str, ttl: float) -> bool:
        """True for the first caller to present `key` within `ttl` seconds, in any process."""
        ...

    async def forget_delivery(self, key: str) -> None:
        """Let `key` be presented again as a first (what its first delivery began did not happen)."""
        ...

    async def usage_in_scope(
        self, platform: str, scope: str, since: datetime, kinds: Sequence[str]
    ) -> list[Event]:
        """The events of `kinds` stored since `since` in the debates of a server or workspace, whichever
        process ran them (those that do not load are left out)."""
        ...

    async def join_workers(self, role: str) -> None:
        """Count this process among the live workers of `role` until it closes (its heartbeat)."""
        ...

    async def live_workers(self, role: str) -> int:
        """How many processes of `role` are alive now (this one included once it joined)."""
        ...

    async def create_debate(
        self, record: DebateRecord, *, claim: ChannelClaim | None = None, values: BindingValues | None = None
    ) -> None:
        """Store a new debate, leased to this store, with its first binding `values` (where it lives
        on its platform) in the same transaction. With `claim`: only while this store's claim on
        that channel stands, which from then on stands for the running debate (found by the claim's
        channel too); else ClaimLapsed and nothing is stored."""
        ...

    async def append(self, event: Event) -> None:
        """Store one event; its `seq` must follow the last stored one without a gap."""
        ...

    async def events(self, debate_id: str) -> list[Event]: ...

    async def get_debate(self, debate_id: str) -> DebateRecord | None: ...

    async def list_debates(self, limit: int = 20) -> Sequence[DebateRecord]: ...

    async def debates_with_status(self, status: DebateStatus) -> Sequence[DebateRecord]: ...

    async def set_status(self, debate_id: str, status: DebateStatus, reason: str = "") -> None: ...

    async def set_binding_value(self, debate_id: str, key: str, value: str) -> None:
        """Remember a front end's delivery detail (message ids and the like)."""
        ...

    async def binding_values(self, debate_id: str) -> dict[str, str]: ...

    async def running_values(self, key: str, where: tuple[str, str]) -> dict[str, int]:
        """Across every worker: the values the running debates hold under binding `key`, each with
        how many hold it, among those whose binding `where[0]` is `where[1]` (which debates of a
        channel speak through which of its webhooks, say)."""
        ...

    async def record_call(self, debate_id: str, key: str, n: int, payload: str) -> None:
        """Remember the result of a debate's n-th model call under `key` (for replay on resume)."""
        ...

    async def calls(self, debate_id: str) -> dict[tuple[str, int], str]: ...

    async def close(self) -> None: ...


@runtime_checkable
class Installations(Protocol):
    """Each workspace's installation of a front end (what the install gave it, sealed by the front
    end: opaque text here) and the one-time states of install links in flight, shared by every
    worker (core.storage.installations). A transient fault raises StoreUnavailable."""

    async def save_installation(self, platform: str, key: str, installed_at: float, data: str) -> None: ...

    async def installation(self, platform: str, key: str) -> str | None: ...

    async def installations(self, platform: str) -> list[tuple[str, str]]:
        """(key, data) of every installation on the platform, oldest first."""
        ...

    async def replace_installation(self, platform: str, key: str, old: str, new: str) -> None:
        """`new` for `old`, unless the row changed meanwhile (another worker wrote it)."""
        ...

    async def delete_installation(self, platform: str, key: str) -> None: ...

    async def issue_state(self, state: str, expires_at: float, *, now: float, most: int) -> None:
        """Store a new state; expired ones go, and the oldest beyond `most` in flight."""
        ...

    async def consume_state(self, state: str) -> float | None:
        """Remove the state; when it expires (None: it was not there)."""
        ...

    async def live_states(self) -> int: ...
