"""The Postgres store's part in one bot over many processes: votes and stops left for a debate's
owner (NOTIFY wakes it), admission claims under an advisory lock, inbound keys and live workers (the
statements: `core.storage.cluster`). Mixed into `PostgresStore`: writes go through its group commit."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import asyncpg

from core.errors import ClaimLapsed
from core.events import Event
from core.ports import AdmissionAsk, ChannelClaim, Claimed, DebateRecord, Refused
from core.settings import StorageSettings
from core.storage import cluster, installations, sql
from core.storage.postgres_db import VOTES_CHANNEL, VoteNotices

SQL = sql.POSTGRES
CLUSTER = cluster.POSTGRES
T = TypeVar("T")


class PostgresCluster(ABC):
    """The driver supplies its writer, reader and fence; these operations run on them."""

    settings: StorageSettings
    _owner: str
    _claims: set[tuple[str, str]]
    _notices: VoteNotices
    _purging: bool
    _role: str | None
    _installs = installations.POSTGRES

    @abstractmethod
    async def _write(self, op: Callable[[asyncpg.Connection], Awaitable[Any]]) -> Any:
        """See the driver."""

    @abstractmethod
    async def _read(self, statement: str, *args: Any) -> list[Any]:
        """See the driver."""

    @abstractmethod
    async def _alone(self, op: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """See the driver."""

    @abstractmethod
    async def _fence(self, conn: asyncpg.Connection, debate_id: str, *, unowned_ok: bool = False) -> None:
        """See the driver."""

    async def post_vote(self, debate_id: str, payload: str) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            await conn.execute(SQL.insert_vote, debate_id, payload)
            await conn.execute("SELECT pg_notify($1, $2)", VOTES_CHANNEL, debate_id)

        await self._write(op)

    async def take_votes(self, debate_id: str) -> list[str]:
        async def op(conn: asyncpg.Connection) -> list[str]:
            await self._fence(conn, debate_id)
            rows = await conn.fetch(SQL.take_votes, debate_id)
            return [r["payload"] for r in sorted(rows, key=lambda r: r["id"])]

        result: list[str] = await self._write(op)
        return result

    async def waiting_votes(self, debate_id: str) -> list[str]:
        return [r["payload"] for r in await self._read(SQL.waiting_votes, debate_id)]

    async def wait_for_votes(self) -> None:
        """Until a NOTIFY arrives (or a poll interval passes, should the listener be down)."""
        await self._notices.wait()

    async def admit(self, ask: AdmissionAsk) -> Claimed | Refused:
        """One transaction that first takes the admissions' advisory lock: one at a time, bot-wide."""

        async def op(conn: asyncpg.Connection) -> Claimed | Refused:
            await conn.execute("SELECT pg_advisory_xact_lock($1)", cluster.ADMISSION_LOCK)
            steps = cluster.admit_steps(
                CLUSTER, ask, worker=self._owner, now=time.time(), lease=self.settings.lease_seconds
            )
            result: Claimed | Refused = await cluster.run_steps_async(steps, conn.fetch)
            return result

        result = await self._alone(op)
        if isinstance(result, Claimed):
            self._claims.add((ask.platform, ask.channel))
        return result

    async def _claimed_for(
        self, conn: asyncpg.Connection, claim: ChannelClaim | None, debate_id: str
    ) -> None:
        """In the transaction that creates the debate, under the admissions' lock (an admission purges
        lapsed claims): its claim now stands for it, or ClaimLapsed when the claim is gone."""
        if claim is None:
            return
        await conn.execute("SELECT pg_advisory_xact_lock($1)", cluster.ADMISSION_LOCK)
        self._claims.discard((claim.platform, claim.channel))  # not renewed even if this fails: it lapses
        params = (claim.platform, claim.channel, debate_id, self._owner)
        if await conn.fetchrow(CLUSTER.claim_started, *params) is None:
            raise ClaimLapsed()

    async def give_back(self, ask: AdmissionAsk, claimed: Claimed) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            steps = cluster.give_back_steps(CLUSTER, ask, claimed, worker=self._owner)
            await cluster.run_steps_async(steps, conn.fetch)

        self._claims.discard((ask.platform, ask.channel))
        await self._write(op)

    async def find_running(self, platform: str, channel: str) -> DebateRecord | None:
        rows = await self._read(CLUSTER.running_in_channel, platform, channel)
        return sql.record_of(rows[0]) if rows else None

    async def first_delivery(self, key: str, ttl: float) -> bool:
        """One statement in a transaction of its own (never retried: a retry after a COMMIT whose
        answer was lost would find its own key and drop the delivery)."""

        async def op(conn: asyncpg.Connection) -> bool:
            now = time.time()
            return await conn.fetchrow(CLUSTER.first_delivery, key, now + ttl, now) is not None

        self._purging = True
        first: bool = await self._alone(op)
        return first

    async def forget_delivery(self, key: str) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            await conn.execute(CLUSTER.forget_delivery, key)

        await self._write(op)

    async def join_workers(self, role: str) -> None:
        async def op(conn: asyncpg.Connection) -> None:
            until = time.time() + self.settings.lease_seconds
            await conn.execute(CLUSTER.worker_alive, self._owner, role, until)

        await self._write(op)
        self._role = role

    async def usage_in_scope(
        self, platform: str, scope: str, since: datetime, kinds: Sequence[str]
    ) -> list[Event]:
        rows = await self._read(CLUSTER.usage_in_scope, platform, scope, since.isoformat(), list(kinds))
        return cluster.loaded(r["payload"] for r in rows)

    async def live_workers(self, role: str) -> int:
        rows = await self._read(CLUSTER.live_workers, role, time.time())
        return int(rows[0][0])

    async def _run_steps(self, make: Callable[[], cluster.Steps]) -> Any:
        async def op(conn: asyncpg.Connection) -> Any:
            return await cluster.run_steps_async(make(), conn.fetch)

        return await self._write(op)

    async def _query(self, statement: str, params: Sequence[Any]) -> list[Any]:
        return await self._read(statement, *params)
