"""The SQLite store's part in one bot over many processes: votes and stops left for a debate's owner,
admission claims, inbound keys and live workers (the statements: `core.storage.cluster`). Mixed into
`SQLiteStore`: every write runs on its writer thread, in the batch's `BEGIN IMMEDIATE` transaction."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from core.errors import ClaimLapsed
from core.events import Event
from core.ports import AdmissionAsk, ChannelClaim, Claimed, DebateRecord, Refused
from core.settings import StorageSettings
from core.storage import cluster, installations, sql

SQL = sql.SQLITE
CLUSTER = cluster.SQLITE


class SQLiteCluster(ABC):
    """The driver supplies its writer, reader and fence; these operations run on them."""

    settings: StorageSettings
    _owner: str
    _claims: set[tuple[str, str]]
    _purging: bool
    _role: str | None
    _installs = installations.SQLITE

    @abstractmethod
    async def _write(self, op: Callable[[sqlite3.Connection], Any], *, savepoint: bool = True) -> Any:
        """See the driver."""

    @abstractmethod
    async def _read(self, statement: str, params: Sequence[Any]) -> list[Any]:
        """See the driver."""

    @abstractmethod
    def _fence(self, conn: sqlite3.Connection, debate_id: str, *, unowned_ok: bool = False) -> None:
        """See the driver."""

    async def post_vote(self, debate_id: str, payload: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(SQL.insert_vote, (debate_id, payload))

        await self._write(op)

    async def take_votes(self, debate_id: str) -> list[str]:
        def op(conn: sqlite3.Connection) -> list[str]:
            self._fence(conn, debate_id)
            rows = conn.execute(SQL.take_votes, (debate_id,)).fetchall()
            return [r["payload"] for r in sorted(rows, key=lambda r: int(r["id"]))]

        result: list[str] = await self._write(op)
        return result

    async def waiting_votes(self, debate_id: str) -> list[str]:
        return [r["payload"] for r in await self._read(SQL.waiting_votes, (debate_id,))]

    async def wait_for_votes(self) -> None:
        """SQLite has no notifications: the owner polls (storage.poll_seconds)."""
        await asyncio.sleep(self.settings.poll_seconds)

    async def admit(self, ask: AdmissionAsk) -> Claimed | Refused:
        """In the writer's `BEGIN IMMEDIATE` transaction: no other process writes meanwhile."""

        def op(conn: sqlite3.Connection) -> Claimed | Refused:
            steps = cluster.admit_steps(
                CLUSTER, ask, worker=self._owner, now=time.time(), lease=self.settings.lease_seconds
            )
            result: Claimed | Refused = cluster.run_steps(steps, lambda s, p: conn.execute(s, p).fetchall())
            return result

        result: Claimed | Refused = await self._write(op)
        if isinstance(result, Claimed):
            self._claims.add((ask.platform, ask.channel))
        return result

    def _claimed_for(self, conn: sqlite3.Connection, claim: ChannelClaim | None, debate_id: str) -> None:
        """In the transaction that creates the debate (on the writer's thread): its claim now stands
        for it, or ClaimLapsed when the claim is gone (it lapsed, and an admission purged it)."""
        if claim is None:
            return
        params = (claim.platform, claim.channel, debate_id, self._owner)
        if conn.execute(CLUSTER.claim_started, params).fetchone() is None:
            raise ClaimLapsed()

    async def give_back(self, ask: AdmissionAsk, claimed: Claimed) -> None:
        def op(conn: sqlite3.Connection) -> None:
            steps = cluster.give_back_steps(CLUSTER, ask, claimed, worker=self._owner)
            cluster.run_steps(steps, lambda s, p: conn.execute(s, p).fetchall())

        self._claims.discard((ask.platform, ask.channel))
        await self._write(op)

    async def find_running(self, platform: str, channel: str) -> DebateRecord | None:
        rows = await self._read(CLUSTER.running_in_channel, (platform, channel))
        return sql.record_of(rows[0]) if rows else None

    async def first_delivery(self, key: str, ttl: float) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            now = time.time()
            return conn.execute(CLUSTER.first_delivery, (key, now + ttl, now)).fetchone() is not None

        self._purging = True
        first: bool = await self._write(op, savepoint=False)  # one change: its only statement
        return first

    async def forget_delivery(self, key: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(CLUSTER.forget_delivery, (key,))

        await self._write(op, savepoint=False)  # one change: its only statement

    async def join_workers(self, role: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            until = time.time() + self.settings.lease_seconds
            conn.execute(CLUSTER.worker_alive, (self._owner, role, until))

        await self._write(op, savepoint=False)
        self._role = role

    async def usage_in_scope(
        self, platform: str, scope: str, since: datetime, kinds: Sequence[str]
    ) -> list[Event]:
        params = (platform, scope, since.isoformat(), sql.sqlite_ids(list(kinds)))
        return cluster.loaded(r["payload"] for r in await self._read(CLUSTER.usage_in_scope, params))

    async def live_workers(self, role: str) -> int:
        rows = await self._read(CLUSTER.live_workers, (role, time.time()))
        return int(rows[0][0])

    async def _run_steps(self, make: Callable[[], cluster.Steps]) -> Any:
        def op(conn: sqlite3.Connection) -> Any:
            return cluster.run_steps(make(), lambda s, p: conn.execute(s, p).fetchall())

        return await self._write(op)

    async def _query(self, statement: str, params: Sequence[Any]) -> list[Any]:
        return await self._read(statement, params)
