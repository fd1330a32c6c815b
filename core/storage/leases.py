"""The debate leases a store holds, and the fence every write to a debate passes, for both stores.

Each debate row carries an owner, a lease end and a fencing token. Taking the lease (`acquire`, or
creating the debate) is one conditional update that raises the token by one and returns it; the
store keeps the token it got. A write to the debate is accepted only while the row's token is still
that one, and the row is the store's own or was given up by the store itself (an end, a release):
an empty owner is no wildcard, since anyone who took the debate since has raised the token. So a
process paused past its lease writes nothing once another took the debate, even if that one has
let it go again; the refused write raises LeaseLost and the debate stops there as taken over.

What a process shows on a platform cannot be fenced by the store, so a process asks first
(`still_held`): its lease counts as good for a heartbeat less than the lease after its last renewal,
by its own clock; past that (the process was paused, or could not reach the store), it renews before
it answers, and a debate taken meanwhile answers no.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Mapping

from core.errors import LeaseLost, StoreError
from core.ports import owner_alive
from core.settings import StorageSettings

log = logging.getLogger(__name__)

NO_TOKEN = -1  # what a store that never held a debate passes to the fence: matches no row


class Leases:
    """The debates one store owns (renewed by its heartbeat) and the token it holds for each."""

    def __init__(
        self, owner: str, settings: StorageSettings, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.owner = owner
        self.held: set[str] = set()
        self._tokens: dict[str, int] = {}
        # a heartbeat short of the lease: room for the clocks of two machines to differ
        self._good_for = settings.lease_seconds - settings.heartbeat_seconds
        self._retry = settings.heartbeat_seconds
        self._clock = clock
        self._good_until: dict[str, float] = {}  # by this process's clock
        self._held_once: set[str] = set()  # taken by this store at some time (lost: a former holder)
        self._renew: Callable[[], Awaitable[None]] | None = None
        self._renewing = asyncio.Lock()
        # told once when their debate is taken, on the loop they were given on
        self._watchers: dict[str, tuple[asyncio.AbstractEventLoop, Callable[[], None]]] = {}

    def watch(self, debate_id: str, taken: Callable[[], None]) -> None:
        """Call `taken()` when this store finds the debate taken by another process (a renewal or
        a write finds out): the debate's running copy stops there, not when it next asks. Called on
        the running loop (SQLite's renewals and writes find out in its writer thread)."""
        self._watchers[debate_id] = (asyncio.get_running_loop(), taken)

    def token(self, debate_id: str) -> int:
        return self._tokens.get(debate_id, NO_TOKEN)

    def took(self, debate_id: str, token: int) -> None:
        self.held.add(debate_id)
        self._tokens[debate_id] = token
        self._held_once.add(debate_id)
        self._good_until[debate_id] = self._clock() + self._good_for

    def renewed(self, held: list[str], renewed: Collection[str], since: float) -> list[str]:
        """A renewal of the `held` leases asked for at `since` (this process's clock) renewed the
        `renewed` ones; the others (returned) are to be looked at (`not_renewed`)."""
        for debate_id in renewed:
            self._good_until[debate_id] = since + self._good_for
        return [debate_id for debate_id in held if debate_id not in renewed]

    def now(self) -> float:
        return self._clock()

    def gave_up(self, debate_id: str) -> None:
        """Given up by this store's own write: no longer renewed, still writable until someone takes it."""
        self.held.discard(debate_id)
        self._good_until.pop(debate_id, None)
        self._watchers.pop(debate_id, None)

    def lost(self, debate_id: str) -> None:
        """Taken by another: no write of this store passes the fence for it again (until it takes it)."""
        self.held.discard(debate_id)
        self._good_until.pop(debate_id, None)
        self._tokens[debate_id] = NO_TOKEN  # kept: a former holder is never a stranger to it
        watcher = self._watchers.pop(debate_id, None)
        if watcher is not None:
            loop, taken = watcher
            with contextlib.suppress(RuntimeError):  # the loop closed: nothing runs to stop
                loop.call_soon_threadsafe(taken)

    def takeable(self, owner: str, lease_until: float, now: float) -> bool:
        """Free, expired, ours, or held by a dead process on this machine."""
        return owner in ("", self.owner) or lease_until <= now or not owner_alive(owner)

    def writable(self, debate_id: str, owner: str, token: int) -> bool:
        return token == self.token(debate_id) and owner in ("", self.owner)

    def check(self, debate_id: str, row: tuple[str, int] | None, *, unowned_ok: bool = False) -> None:
        """Raise unless this store may write the debate whose row holds (owner, token).

        `unowned_ok`: a front end's delivery detail may also be kept for a debate no one owns by a
        store that never held it (a thread reattached before its debate's lease is taken); never by
        a former holder, whose token says it may have been taken over since."""
        if row is None:
            raise StoreError(f"no debate {debate_id}")
        owner, token = row
        if self.writable(debate_id, owner, token):
            return
        if unowned_ok and owner == "" and debate_id not in self._tokens:
            return
        self.lost(debate_id)
        holder = owner or "none now: it was taken over, then given up"
        raise LeaseLost(f"debate {debate_id} is owned by another process ({holder})")

    def not_renewed(self, debate_ids: list[str], rows: Mapping[str, tuple[str, int]]) -> None:
        """Held debates a renewal found no longer this store's; `rows`: their (owner, token) now."""
        for debate_id in debate_ids:
            row = rows.get(debate_id)
            if row is None:  # deleted
                self.held.discard(debate_id)
                continue
            if row[0] == self.owner:
                continue
            if self.writable(debate_id, *row):  # given up by this store's own write (an end, a release)
                self.gave_up(debate_id)
                continue
            self.lost(debate_id)
            log.warning("debate %s: its lease was taken by another process", debate_id)

    async def heartbeat(
        self, every: float, renew: Callable[[], Awaitable[None]], tending: Callable[[], bool] = lambda: False
    ) -> None:
        """Renew the held leases every `every` seconds, for good (and whatever else the store keeps
        alive on the same beat while `tending()` says there is some: its claims, its worker row)."""
        self._renew = renew
        while True:
            await asyncio.sleep(every)
            if not self.held and not tending():
                continue
            try:
                await renew()
            except StoreError as exc:
                log.warning("could not renew debate leases: %s", exc)

    def _stale(self, debate_id: str) -> bool:
        """Held, but not renewed within its time by this process's clock."""
        return debate_id in self.held and self._clock() >= self._good_until.get(debate_id, 0.0)

    async def still_held(self, debate_id: str) -> bool:
        """Whether this process may still act for the debate on a platform: not once another has
        taken it. A debate this store never held, or gave up itself (its end), answers yes. A lease
        not renewed within its time (a pause, the store unreachable) is renewed first; while the store
        cannot say, this waits (another process may hold it)."""
        while self._stale(debate_id):
            async with self._renewing:  # one renewal for everyone asking at once
                if not self._stale(debate_id):
                    break
                try:
                    if self._renew is None:
                        raise StoreError("the store renews no leases yet")
                    await self._renew()
                except StoreError as exc:
                    log.warning("debate %s: could not confirm its lease, asking again: %s", debate_id, exc)
                if self._stale(debate_id):
                    await asyncio.sleep(self._retry)
        return self.token(debate_id) != NO_TOKEN or debate_id not in self._held_once


class HoldsLeases:
    """What a store answers from its leases alone (both stores)."""

    _leases: Leases

    async def still_held(self, debate_id: str) -> bool:
        return await self._leases.still_held(debate_id)

    def when_taken(self, debate_id: str, taken: Callable[[], None]) -> None:
        self._leases.watch(debate_id, taken)
