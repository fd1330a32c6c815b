"""One debate's ordered delivery queue: the part of delivery that both chat front ends share.

The engine's `emit` only enqueues; one worker task per debate takes the items in order and hands
each to the platform's `deliver`. Interim edits the platform's pacing holds back are sent by the
same worker when they fall due (so they never overtake or race the queue), and everything still held
is sent when the debate's last item has been delivered. An exception in one item's delivery is
logged and the next item goes on; the worker's own failure is logged once, when it ends.

Each platform supplies only `deliver(item)`, `send(held)` and its pacing (`Pacing`).

Before each item or held edit the queue asks `fence()` whether this process still shows the debate:
a process paused past its lease, whose debate another process took over and shows, finds out there
and drops what it still had queued instead of showing it a second time. Each request the worker's
deliveries send asks it too, the SDKs' own retries included (`adapters.delivery.fence`).

An urgent item (a vote window's opening, whose clock waits for people to see it; `event_of` reads
an item's event, None for items that are none) goes ahead of the items queued before it that may
wait (`yields`: AI-vote card edits, clock ticks), and of held interim edits, so it does not wait
behind them in the platform's rate windows. It never overtakes anything else (the card it edits, a
turn). The platform's rendering is cumulative per message, so the edits it overtakes still show
everything when they follow.

Two ways to run, as the platform needs:
- on demand (`on_demand=True`): a worker starts when an item is put and ends when nothing is left
  to do (no item queued, no held edit); a later item starts a new one.
- started (`on_demand=False`): the worker runs from `start()` until the last item (`is_last`) or
  `end()`, waiting in between; items put before `start()` are kept for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from adapters.delivery import fence as request_fence
from adapters.delivery.outage import ShownElsewhere
from core.events import Event, HumanVoteOpened

log = logging.getLogger(__name__)

Item = TypeVar("Item")
Held = TypeVar("Held")


class Pacing(Protocol[Held]):
    """A platform's throttle for interim edits, as the queue sees it."""

    def take_due(self) -> list[Held]:
        """The held edits whose time has come (no longer held)."""
        ...

    def next_due(self) -> float | None:
        """Seconds until the next held edit is due (0: now), None when nothing is held."""
        ...

    def take_all(self) -> list[Held]:
        """Everything still held, in order (the debate's delivery is ending)."""
        ...


class _End:
    """Marks the end of delivery (`DeliveryQueue.end`)."""


_END = _End()


class DeliveryQueue(Generic[Item, Held]):
    def __init__(
        self,
        *,
        deliver: Callable[[Item], Awaitable[None]],
        send: Callable[[Held], Awaitable[None]],
        pacing: Pacing[Held],
        name: Callable[[], str],
        on_demand: bool,
        is_last: Callable[[Item], bool] = lambda item: False,
        describe: Callable[[Item], str] = lambda item: type(item).__name__,
        on_stopped: Callable[[], None] | None = None,
        event_of: Callable[[Item], Event | None] = lambda item: None,
        yields: Callable[[Item], bool] = lambda item: False,
        fence: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        self._deliver = deliver
        self._send = send
        self._pacing = pacing
        self._name = name  # "platform debate-id", for the task's name and the logs
        self._on_demand = on_demand
        self._is_last = is_last
        self._describe = describe
        self._on_stopped = on_stopped
        self._event_of = event_of
        self._yields = yields
        self._fence = fence
        self._items: deque[Item | _End] = deque()
        self._wake = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._items)

    @property
    def finished(self) -> bool:
        """A started worker has ended (all delivered, or cancelled)."""
        return self._worker is not None and self._worker.done()

    def put(self, item: Item) -> None:
        self._items.append(item)
        self._wake.set()
        if self._on_demand:
            self.start()

    def end(self) -> None:
        """Deliver what is queued, then end (the debate ended without its last event)."""
        self._items.append(_END)
        self._wake.set()

    def clear(self) -> None:
        """Forget everything queued (nothing more can or should be shown)."""
        self._items.clear()

    def pull(self, match: Callable[[Item], bool]) -> Item | None:
        """Take the first queued item that `match`es out of the queue (to deliver it together with
        the one at hand), or None."""
        for index, item in enumerate(self._items):
            if not isinstance(item, _End) and match(item):
                del self._items[index]
                return item
        return None

    def start(self) -> None:
        """Start the worker unless it runs (items queued before are delivered first)."""
        self._wake.set()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run(), name=f"delivery {self._name()}")
            self._worker.add_done_callback(self._stopped)

    async def idle(self) -> None:
        """Wait until the worker has ended (everything queued delivered, or it was cancelled or
        failed: its failure is logged once, not raised here). Cancelling the waiter does not cancel
        the worker."""
        worker = self._worker
        if worker is not None and not worker.done():
            await asyncio.wait({worker})

    async def aclose(self) -> None:
        """Drop what is queued and cancel the worker."""
        self._items.clear()
        worker = self._worker
        if worker is not None and not worker.done():
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker

    # --- the worker ----------------------------------------------------------------------------

    def _stopped(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: delivery stopped", self._name(), exc_info=task.exception())
        if self._on_stopped is not None:
            self._on_stopped()

    def _urgent_index(self) -> int | None:
        """Where the first urgent item may be taken from: every item before it yields."""
        for index, item in enumerate(self._items):
            if isinstance(item, _End):
                return None
            if isinstance(self._event_of(item), HumanVoteOpened):
                return index
            if not self._yields(item):
                return None
        return None

    def _take(self) -> Item | _End:
        """The next item: an urgent one that may go first, else the oldest."""
        index = self._urgent_index()
        if index is None:
            return self._items.popleft()
        item = self._items[index]
        del self._items[index]
        return item

    async def _shows_it(self) -> bool:
        """Whether this process still shows the debate; if not, what it holds is dropped."""
        if self._fence is None or await self._fence():
            return True
        dropped = len(self._items) + len(self._pacing.take_all())
        self._items.clear()
        if dropped:
            log.warning("%s: another process shows this debate now; %d items dropped", self._name(), dropped)
        return False

    async def _run(self) -> None:
        request_fence.bind(self._fence)  # the SDKs' own retries ask it too (adapters.delivery.fence)
        while await self._shows_it():
            if self._urgent_index() is None:
                for held in self._pacing.take_due():
                    await self._send(held)
            if self._items:
                item = self._take()
                if isinstance(item, _End):
                    break
                await self._guarded(item)
                if self._is_last(item):
                    break
                continue
            wait = self._pacing.next_due()
            if wait is None and self._on_demand:
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)
        else:
            return  # another process shows the debate: nothing more from here
        if await self._shows_it():
            for held in self._pacing.take_all():
                await self._send(held)

    async def _guarded(self, item: Item) -> None:
        try:
            await self._deliver(item)
        except ShownElsewhere:
            return  # the next turn of the loop drops the rest (`_shows_it`)
        except Exception:  # one funnel: a failure in one item's delivery must not stop the rest
            log.exception("%s: could not deliver %s", self._name(), self._describe(item))
