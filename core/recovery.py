"""Recovery: picking up the debates a stop, a crash or a dead process cut short.

The engine's whole policy for it lives here: which stored debates a process may take (not one whose
lease a live process holds), what happens to each (resumed live, closed because resuming is off or
its channel is gone, closed because it no longer fits the code), the messages the thread is shown,
and the failover loops of a process that runs beside others (taking over debates whose owner died,
applying the votes other processes leave). A front end only says how to reach a debate's channel
again (`Attach`) and hears which debates were taken over later (`Adopted`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from core.errors import NowhereToRun, PlatformUnavailable, StoreError, UnreadableDebate
from core.events import Event, Notice
from core.manager import DebateManager
from core.ports import DebateRecord, EventSink
from core.prepare import AlreadyEnded, CannotResume, LeasedElsewhere
from core.session import DebateHandle

log = logging.getLogger(__name__)

Attach = Callable[[DebateRecord, dict[str, str]], Awaitable[EventSink | None]]
"""Gives a sink bound to where the debate was shown (from its stored binding values), or None when
that place is gone; raises PlatformUnavailable when the platform is briefly unreachable (the debate
waits for the next look), NowhereToRun when the place is gone for good (the debate is closed, stopped)."""
Adopted = Callable[[list[DebateHandle]], Awaitable[None]]
"""Told which debates a later look took over, so the front end binds them as it binds resumed ones."""

TAKEN_OVER = "The Rostra process running this debate stopped answering; another one takes it over from here."
CHANNEL_GONE = "Could not be resumed after a restart: the channel it ran in is gone."
RESUME_OFF = "Rostra restarted and resuming is off here, so this debate ends now."
ABANDONED = (
    "the process running it stopped before it could say so (the database was unavailable, or it was killed)"
)
"""The stored reason of a debate left `running` by a process that is gone, settled on the next start."""
CANNOT_RESUME = "This debate could not be resumed after a restart: {reason}."
CANNOT_RESUME_ASKED = "This debate could not be resumed: {reason}."
CATCH_UP_WAIT = 10.0
"""Seconds a debate taken over is given to catch up with its log before what was left for it is
taken (a replay takes milliseconds; past this, the vote loop takes it later)."""
CATCH_UP_POLL = 0.02


class _Nowhere:
    """The sink of a debate whose channel is gone: its closing events are only stored."""

    async def emit(self, event: Event) -> None:
        return None


class Recovery:
    """Resumes one process's cut-short debates and, once failover is on, keeps adopting orphans."""

    def __init__(self, manager: DebateManager, *, resume: bool, heartbeat_seconds: float) -> None:
        self._manager = manager
        self._resume_enabled = resume
        self._heartbeat = heartbeat_seconds
        self._attached: dict[str, Attach] = {}
        self._adopted: dict[str, Adopted] = {}
        self._looking = asyncio.Lock()
        self._adopter: asyncio.Task[None] | None = None
        self._votes: asyncio.Task[None] | None = None
        self._unreadable: set[str] = set()
        """Debates whose stored data no longer loads: named in the log once, then left as they are."""
        self._elsewhere: dict[str, str] = {}
        """Debates another process runs, by owner: said once per owner (the look repeats every beat)."""
        self._failover = False

    async def resume_debates(
        self, platform: str, attach: Attach, *, adopted: Adopted | None = None
    ) -> list[DebateHandle]:
        """Pick up this platform's debates that a stop, a crash or a dead process cut short.

        For each, `attach(record, binding_values)` gives a sink bound to where the debate was shown,
        or None when that place is gone (the debate is then closed with the reason stored); if it
        raises NowhereToRun (gone for good: the workspace removed the app) the debate is closed as
        stopped; if it raises otherwise (the platform is briefly unreachable), the debate is left
        for the next look. With resuming off the debate is closed with a message instead; one that
        cannot be replayed here (its format or options changed) is closed saying why. The rest
        continue, live.

        A debate whose lease a live process holds is left to it. From the first call on, once
        `enable_failover()` was called, this keeps looking (every `heartbeat_seconds`) for this
        platform's debates whose owner stopped renewing its lease, and takes them over: the
        failover between processes. After each such look, `adopted(handles)` tells the front end
        which debates it took over (those `attach` gave a sink for and that did not resume were
        closed), so it binds them as it binds the ones returned here.
        """
        self._attached[platform] = attach
        if adopted is not None:
            self._adopted[platform] = adopted
        self._start_adopting()
        async with self._looking:
            return await self._resume(platform, attach)

    async def resume_asked(self, record: DebateRecord, sink: EventSink) -> DebateHandle | None:
        """Resume the one stored debate a person asked for (`rostra resume ID`), shown on `sink`.

        Raises LeasedElsewhere (a live process runs it) and AlreadyEnded (its end is stored). One that
        cannot be replayed here is closed saying why, and None is returned.
        """
        try:
            return await self._manager.resume(record, sink)
        except AlreadyEnded:
            raise
        except CannotResume as exc:
            message = CANNOT_RESUME_ASKED.format(reason=exc)
            await self._manager.close_stored(record, sink, reason="failed", message=message)
            return None

    async def settle_abandoned(self, platform: str) -> list[str]:
        """On the next start: this platform's debates a gone process left `running` (its lease ran
        out; the store was down when it stopped, or it was killed) are stored as `interrupted`, as
        that process would have written. They stay resumable. Returns their ids."""
        store = self._manager.store
        settled: list[str] = []
        for record in await store.debates_with_status("running"):
            if record.binding.platform != platform or self._manager.get(record.id) is not None:
                continue
            if record.leased_by_other(store.owner, time.time()):
                continue  # a live process runs it
            try:
                if not await store.acquire(record.id):
                    continue
                await store.set_status(record.id, "interrupted", ABANDONED)  # gives the lease up
            except StoreError as exc:
                log.warning("debate %s: could not store it as interrupted: %s", record.id, exc)
                continue
            settled.append(record.id)
        return settled

    def enable_failover(self) -> None:
        """Run as one of many processes: take over debates whose owner died, and apply the votes
        other processes leave for debates run here."""
        self._failover = True
        self._start_adopting()
        if self._votes is None:
            self._votes = asyncio.create_task(self._manager.deliver_votes_forever(), name="rostra-votes")

    async def aclose(self) -> None:
        """Stop looking (the debates themselves are the manager's to stop)."""
        for task in (self._adopter, self._votes):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._adopter = self._votes = None

    def _start_adopting(self) -> None:
        if self._failover and self._attached and self._adopter is None:
            self._adopter = asyncio.create_task(self._adopt_forever(), name="rostra-adopt-debates")

    async def _adopt_forever(self) -> None:
        while True:
            await asyncio.sleep(self._heartbeat)
            for platform, attach in list(self._attached.items()):
                try:
                    async with self._looking:
                        handles = await self._resume(platform, attach)
                        adopted = self._adopted.get(platform)
                        if adopted is not None:
                            await adopted(handles)
                        await self._requests_left_for(handles)
                except StoreError as exc:
                    log.warning("could not look for %s debates to take over: %s", platform, exc)
                except Exception:
                    log.exception("could not look for %s debates to take over", platform)

    async def _requests_left_for(self, handles: list[DebateHandle]) -> None:
        """What people asked of debates just taken over while their owner lay dead, applied now
        rather than at the vote loop's next wake (the next request on Postgres, the next poll on
        SQLite): a Stop at once, even while the debate catches up with its log (it may be redoing
        the turn its owner died in); votes as soon as it caught up (one cast while it replays would
        be refused). Each debate on its own: one slow to catch up does not hold back the others'."""
        async with asyncio.TaskGroup() as group:
            for handle in handles:
                group.create_task(self._left_for(handle), name=f"left-for-{handle.debate_id}")

    async def _left_for(self, handle: DebateHandle) -> None:
        try:
            if handle.catching_up:
                await self._manager.take_stop(handle.debate_id)
            deadline = time.monotonic() + CATCH_UP_WAIT
            # looked at every few ms: a replay says nothing when it goes live, and is over in a moment
            while handle.catching_up and not handle.done and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(CATCH_UP_POLL)
            await self._manager.deliver_votes(handle.debate_id)
        except StoreError as exc:
            log.warning("debate %s: could not take what was left for it: %s", handle.debate_id, exc)

    async def _resume(self, platform: str, attach: Attach) -> list[DebateHandle]:
        store = self._manager.store
        found: list[DebateRecord] = []
        for status in ("running", "interrupted"):
            found += [r for r in await store.debates_with_status(status) if r.binding.platform == platform]
        handles: list[DebateHandle] = []
        ids = {r.id for r in found}
        self._elsewhere = {i: owner for i, owner in self._elsewhere.items() if i in ids}
        for record in found:
            if self._manager.get(record.id) is not None:
                continue
            if record.leased_by_other(store.owner, time.time()):
                said = log.debug if self._elsewhere.get(record.id) == record.owner else log.info
                said("debate %s runs in another process (%s); left to it", record.id, record.owner)
                self._elsewhere[record.id] = record.owner
                continue
            if record.id in self._unreadable:
                continue
            attached: EventSink | NowhereToRun | None
            try:
                attached = await attach(record, await store.binding_values(record.id))
            except UnreadableDebate as exc:
                self._cannot_read(exc)
                continue
            except PlatformUnavailable as exc:  # tried again at the next look (one line each time)
                log.warning("debate %s: %s; it stays resumable", record.id, exc)
                continue
            except NowhereToRun as exc:  # closed below, as a debate whose channel is gone
                log.info("debate %s: %s; it is closed", record.id, exc)
                attached = exc
            except Exception:
                log.exception(
                    "debate %s: could not reattach its %s delivery; it stays resumable", record.id, platform
                )
                continue
            try:
                handle = await self._resume_one(record, attached)
            except LeasedElsewhere as exc:
                log.info("%s", exc)
                continue
            except UnreadableDebate as exc:
                self._cannot_read(exc)
                continue
            if handle is not None:
                handles.append(handle)
        return handles

    def _cannot_read(self, exc: UnreadableDebate) -> None:
        self._unreadable.add(exc.debate_id)
        log.warning("%s; it is left as it is", exc)

    async def _resume_one(
        self, record: DebateRecord, sink: EventSink | NowhereToRun | None
    ) -> DebateHandle | None:
        manager = self._manager
        if isinstance(sink, NowhereToRun):
            await manager.close_stored(record, _Nowhere(), reason="stopped", message=str(sink))
        elif sink is None:
            await manager.close_stored(record, _Nowhere(), reason="failed", message=CHANNEL_GONE)
        elif not self._resume_enabled:
            await manager.close_stored(record, sink, reason="interrupted", message=RESUME_OFF)
        else:
            taken_over = record.owner not in ("", manager.store.owner) and record.status == "running"
            notice = Notice(level="warning", code="taken_over", message=TAKEN_OVER) if taken_over else None
            try:
                return await manager.resume(record, sink, notice=notice)
            except AlreadyEnded:
                return None
            except CannotResume as exc:
                await manager.close_stored(
                    record, sink, reason="failed", message=CANNOT_RESUME.format(reason=exc)
                )
        return None
