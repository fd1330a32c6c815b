"""Group commit, for both stores: writes queued while a transaction runs go into the next one.

One writer task takes whatever is queued when it wakes (up to MAX_BATCH writes) and hands the batch
to the store, which runs it as one transaction and says, per write, whether it is committed (and its
value) or refused (and why). Each caller hears only then, after the COMMIT of its own write: what a
caller hands on afterwards is stored. A write that another write's failure undoes is never reported
as done; how one write's refusal is kept from undoing the others is the store's business.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from core.errors import StoreError, StoreUnavailable

MAX_BATCH = 256

W = TypeVar("W")
Outcome = tuple[bool, Any]  # (True, value) committed; (False, exception) refused or undone
RunBatch = Callable[[list[W]], Awaitable[list[Outcome]]]


@dataclass
class _Queued(Generic[W]):
    write: W | None  # None: the writer stops here
    future: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class GroupCommit(Generic[W]):
    """The queue and the writer task in front of a store's transactions."""

    def __init__(self, run: RunBatch[W], fault: Callable[[BaseException], StoreError], name: str) -> None:
        self._run = run
        self._fault = fault
        self._queue: asyncio.Queue[_Queued[W]] = asyncio.Queue()
        self._closed = False
        self._task = asyncio.create_task(self._loop(), name=name)

    async def submit(self, write: W) -> Any:
        """Queue one write; its value once committed, or the store's error."""
        if self._closed:
            raise StoreUnavailable("the store is closed")
        queued = _Queued(write)
        self._queue.put_nowait(queued)
        return await queued.future

    async def close(self) -> None:
        """Run what is queued, then stop the writer."""
        if self._closed:
            return
        self._closed = True
        self._queue.put_nowait(_Queued(None))
        await asyncio.wait([self._task])

    async def _loop(self) -> None:
        while True:
            batch = await self._next_batch()
            stop = any(q.write is None for q in batch)
            pending = [q for q in batch if q.write is not None and not q.future.cancelled()]
            try:
                if pending:
                    outcomes = await self._run([q.write for q in pending if q.write is not None])
                    for q, (ok, value) in zip(pending, outcomes, strict=True):
                        if q.future.done():
                            continue
                        if ok:
                            q.future.set_result(value)
                        else:
                            q.future.set_exception(value)
            except Exception as exc:  # never leave a caller waiting
                for q in pending:
                    if not q.future.done():
                        q.future.set_exception(self._fault(exc))
            if stop:
                return

    async def _next_batch(self) -> list[_Queued[W]]:
        batch = [await self._queue.get()]
        while len(batch) < MAX_BATCH and not self._queue.empty() and batch[-1].write is not None:
            batch.append(self._queue.get_nowait())
        return batch
