"""A person's request that needs the store, carried through the store's outage instead of refused.

While the database is away a debate pauses and waits it out (core/session/outage.py), up to
`storage.outage_limit`. A Stop asked meanwhile waits with it, on whichever worker it reaches:
refused, it was lost (measured: the database locked 30 s, a Stop through the worker that did not
run the debate was answered after 20 s "database is locked" and the debate went on). The person is
told once that it waits, and past the limit that it could not be kept, in words a person reads.
A reaction passed on to the debate's owner waits the same way (adapters/remote_votes.py): its event
is not sent again, so refused it was lost. Status, with nothing to keep, answers at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from core.errors import StoreGaveUp, StoreUnavailable
from core.settings import StorageSettings

log = logging.getLogger(__name__)

T = TypeVar("T")


class Waiting:
    """Tells the person, once however many store calls their request makes, that it waits.

    The telling runs beside the request: a platform failing as it is said (a reply waits up to
    minutes for it) does not hold the request back, so a Stop is applied once the store is back
    even while the person cannot yet be told. Use it as `async with`: leaving waits for the telling,
    so whatever the person is told next follows it (cancelled, it is cancelled too)."""

    def __init__(self, tell: Callable[[], Awaitable[None]]) -> None:
        self._tell = tell
        self._telling: asyncio.Future[None] | None = None

    async def __call__(self) -> None:
        if self._telling is None:
            self._telling = asyncio.ensure_future(self._tell())

    async def __aenter__(self) -> Waiting:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if self._telling is None:
            return
        if kind is None:
            await self._telling  # a failure to tell is the caller's, as when it was said inline
            return
        if issubclass(kind, asyncio.CancelledError):
            self._telling.cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):  # the failure in flight wins
            await self._telling


async def outlasting(
    call: Callable[[], Awaitable[T]], limits: StorageSettings, waiting: Waiting | None = None
) -> T:
    """`call()`, tried again with backoff (`storage.retry_initial` doubling to `retry_max`) while the
    store is unavailable; `waiting` is awaited at the first failure. Raises StoreGaveUp once the
    store has been away `storage.outage_limit` seconds; other store errors pass at once."""
    delay = limits.retry_initial
    began: float | None = None
    while True:
        try:
            return await call()
        except StoreUnavailable as exc:
            now = time.monotonic()
            if began is None:
                began = now
                log.warning("a person's request waits for the store: %s", exc)
                if waiting is not None:
                    await waiting()
            waited = now - began
            if waited >= limits.outage_limit:
                raise StoreGaveUp(f"the database was unavailable for {waited:.0f} s ({exc})") from exc
            await asyncio.sleep(min(delay, limits.outage_limit - waited))
            delay = min(delay * 2, limits.retry_max)


TELL_AFTER = 1.0
"""Seconds a request may take confirming this process still runs its debate before the person is
told it waits (a lease not renewed while the database was away is confirmed with the database)."""


async def confirmed(asking: Awaitable[T], limits: StorageSettings, waiting: Waiting | None = None) -> T:
    """`asking`, a call that itself waits while the store is away (`Store.still_held`): `waiting` is
    told once it has taken `TELL_AFTER` seconds; StoreGaveUp past `storage.outage_limit`."""
    task = asyncio.ensure_future(asking)
    try:
        if waiting is not None:
            done, _ = await asyncio.wait({task}, timeout=TELL_AFTER)
            if not done:
                await waiting()
        return await asyncio.wait_for(task, limits.outage_limit)
    except TimeoutError as exc:
        raise StoreGaveUp(f"the database was unavailable for {limits.outage_limit:.0f} s") from exc
    finally:
        task.cancel()


async def confirmed_now(asking: Awaitable[bool]) -> bool:
    """The same for what is answered at once (Status): StoreUnavailable past `TELL_AFTER`."""
    try:
        return await asyncio.wait_for(asking, TELL_AFTER)
    except TimeoutError as exc:
        raise StoreUnavailable("could not confirm that this process still runs the debate") from exc


STATUS_UNKNOWN = (  # Status asked meanwhile: nothing to keep, so answered at once
    "The database isn't answering right now, so I can't say how the debate stands; try again in a moment."
)
TRY_AGAIN = "The database isn't answering right now; try again in a moment."  # anything else read


def why_not_started(exc: Exception) -> str:
    """What a person is told when their start is refused: the store's own words when it is away
    would be "database is locked" and the like."""
    return TRY_AGAIN if isinstance(exc, StoreUnavailable) else str(exc)


def stop_waits(limits: StorageSettings) -> str:
    """What the person whose Stop waits for the database is told at once."""
    return (
        "The database isn't answering right now. Your Stop is kept and goes through as soon as "
        f"it's back (I keep trying for up to {span(limits.outage_limit)})."
    )


def vote_waits(limits: StorageSettings) -> str:
    """What a person whose vote waits for the database is told at once (their answer follows)."""
    return (
        "The database isn't answering right now. Your vote is kept and passed on as soon as it's"
        f" back (I keep trying for up to {span(limits.outage_limit)})."
    )


def stop_not_kept(limits: StorageSettings) -> str:
    """What they are told when it was away too long to record the Stop."""
    return (
        f"The database hasn't answered for {span(limits.outage_limit)}, so your Stop couldn't be "
        "recorded. The debate can't go on without the database either; ask again once it's back."
    )


def span(seconds: float) -> str:
    """A length of time as a person says it: "2 minutes", "90 seconds", "1 second"."""
    whole = round(seconds)
    if whole >= 60 and whole % 60 == 0:
        minutes = whole // 60
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{whole} second{'s' if whole != 1 else ''}"
