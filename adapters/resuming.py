"""Debates picked up again after a restart, each in the thread it ran in (every chat front end).

While the core decides which of a platform's cut-short debates to resume, the front end reattaches
each one's thread (`reattach`: what the thread shows, rebuilt from where the debate lives and its
stored log; None when the thread is gone). Then each reattached thread is bound to its resumed
debate, or, when the core closed the debate instead, left to show its closing notice. Debates
adopted later from a stopped worker are bound the same way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from core.ports import DebateRecord, EventSink
from core.recovery import Recovery
from core.session import DebateHandle

T = TypeVar("T")


class Reattachments(Generic[T]):
    """The threads reattached for one platform, each until its debate resumes or closes."""

    def __init__(
        self,
        reattach: Callable[[DebateRecord, dict[str, str]], Awaitable[T | None]],
        sink_of: Callable[[T], EventSink],
        *,
        bind: Callable[[DebateHandle, T], Awaitable[None]],
        close: Callable[[T], Awaitable[None]],
    ) -> None:
        self._reattach, self._sink_of, self._bind, self._close = reattach, sink_of, bind, close
        self._found: dict[str, T] = {}

    async def resume(self, recovery: Recovery, platform: str) -> list[DebateHandle]:
        """Resume the platform's debates (and those adopted later); their handles."""
        handles = await recovery.resume_debates(platform, self._attach, adopted=self.settle)
        await self.settle(handles)
        return handles

    async def _attach(self, record: DebateRecord, values: dict[str, str]) -> EventSink | None:
        again = await self._reattach(record, values)
        if again is None:
            return None
        self._found[record.id] = again
        return self._sink_of(again)

    async def settle(self, handles: list[DebateHandle]) -> None:
        """Each reattached thread to its resumed debate; the others (closed by the core) show the end."""
        for handle in handles:
            again = self._found.pop(handle.debate_id, None)
            if again is not None:
                await self._bind(handle, again)
        closed = list(self._found.values())
        self._found.clear()
        for again in closed:
            await self._close(again)

    def abandoned(self) -> list[T]:
        """What was reattached and is left unbound (the resume failed part way)."""
        left = list(self._found.values())
        self._found.clear()
        return left
