"""A debate's emit path: one event at a time, stamped, stored, applied to the state, then shown.

Store first, then the sink, so what a channel shows is always in the log; `seq` is gap-free. An
emit always runs to the end, even when its caller is cancelled (a stop lands mid-write): otherwise
the in-memory seq, the state and the log could part ways. A sink may emit from inside its own
`emit` (e.g. cast the votes already on a ballot when a window opens): that nested emit runs at
once, so the store and the sink still see one order.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import cast

from core.clock import DebateClock
from core.events import ClockTick, DebateCompleted, E, TurnCompleted
from core.ports import EventSink, Store
from core.session.notices import PendingNotices
from core.session.outage import StoreGuard
from core.session.platform import PlatformGate
from core.session.replaying import CatchUp
from core.state import DebateState

log = logging.getLogger(__name__)


class EventPath:
    """Emits one debate's events (an `core.events.Emit`)."""

    def __init__(
        self,
        debate_id: str,
        *,
        store: Store,
        sink: EventSink,
        state: DebateState,
        clock: DebateClock,
        catch_up: CatchUp,
        guard: StoreGuard,
        notices: PendingNotices,
        platform: PlatformGate | None = None,
    ) -> None:
        self._debate_id = debate_id
        self._store = store
        self._sink = sink
        self._state = state
        self._clock = clock
        self._catch_up = catch_up
        self._guard = guard
        self._notices = notices
        self._platform = platform  # while the platform is down, the next event waits
        self._seq = catch_up.last_seq
        self._lock = asyncio.Lock()
        self._delivering: asyncio.Task[object] | None = None

    async def __call__(self, event: E) -> E:
        """Stamp `event`, store it, apply it to the state, then hand it to the sink; the stamped event."""
        if self._delivering is not None and self._delivering is asyncio.current_task():
            return await self._emit_locked(event)
        if self._platform is not None:
            await self._platform.wait()
        emitting = asyncio.ensure_future(self._emit_in_order(event))
        try:
            return await asyncio.shield(emitting)
        except asyncio.CancelledError:
            await asyncio.wait([emitting])  # finish the write, then let the cancellation through
            raise

    async def _emit_in_order(self, event: E) -> E:
        async with self._lock:
            self._delivering = asyncio.current_task()
            try:
                return await self._emit_locked(event)
            finally:
                self._delivering = None

    async def _emit_locked(self, event: E) -> E:
        stored = self._catch_up.stored(event)
        if stored is not None:  # the channel has seen it: not stored or shown again
            return stored
        owed = self._notices.before(event)
        if owed is not None:
            await self._emit_locked(owed)
        self._seq += 1
        stamped = cast(E, event.model_copy(update=self._stamp(event)))  # a copy keeps its type
        try:
            await self._guard.write(lambda: self._store.append(stamped))
        except Exception:
            self._seq -= 1  # not stored: the next event takes this seq
            raise
        self._state.apply(stamped)
        try:
            await self._sink.emit(stamped)
        except Exception:
            log.exception("debate %s: the sink failed on %s #%d", self._debate_id, stamped.kind, stamped.seq)
        note = self._notices.after()
        if note is not None and isinstance(stamped, DebateCompleted):  # nothing follows the end
            log.info("debate %s: %s (not told: the debate had ended)", self._debate_id, note.message)
        elif note is not None:
            await self._emit_locked(note)
        return stamped

    def _stamp(self, event: E) -> dict[str, object]:
        update: dict[str, object] = {"debate_id": self._debate_id, "seq": self._seq, "at": datetime.now(UTC)}
        if isinstance(event, TurnCompleted) and event.elapsed is None:
            update["elapsed"] = self._clock.elapsed
        elif isinstance(event, ClockTick):
            update["paused_total"] = self._clock.paused_total
        return update
