"""How many HTTP requests one call to a platform's client really made.

A platform's client retries inside one call (discord.py after a 429, a 5xx or a dropped
connection); only after a 5xx or a lost answer may a post have landed twice, so only then is it
read back. The requests of the call itself say so, where timing it cannot (a call also takes long
when it merely waited its turn in a rate-limit queue). The client's aiohttp trace
(`adapters.metering.platform_trace`) counts each request into the counter of the task that made it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Requests:
    """The requests one call made so far, and whether one of them may have been carried out with
    its answer lost (a 5xx, a timeout, a dropped connection): then a later one may be a duplicate."""

    count: int = 0
    uncertain: bool = False

    @property
    def maybe_twice(self) -> bool:
        """The call was sent again after an answer that did not say it failed cleanly."""
        return self.uncertain and self.count > 1


_current: ContextVar[Requests | None] = ContextVar("rostra_requests", default=None)


def count_request() -> None:
    """One request left for the platform (called by the client's trace, in the caller's task)."""
    counter = _current.get()
    if counter is not None:
        counter.count += 1


def answer_lost() -> None:
    """A request of the current call got a 5xx or no answer at all (called by the client's trace)."""
    counter = _current.get()
    if counter is not None:
        counter.uncertain = True


@contextmanager
def counting() -> Iterator[Requests]:
    """Count the requests made inside the block (by this task)."""
    counter = Requests()
    token = _current.set(counter)
    try:
        yield counter
    finally:
        _current.reset(token)
