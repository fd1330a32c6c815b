"""Stopping a debate from any process: told at once where it runs here, else left in the store for
its owner (applied as relayed votes are), with an answer for the person who asked."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping
from typing import Literal

from core.errors import StoreError
from core.outlasting import Waiting, confirmed, outlasting
from core.ports import Store
from core.session import DebateSession
from core.settings import StorageSettings

StopAnswer = Literal["stopped", "requested", "already_ended", "no_such_debate"]
STOP_POLL = 0.2  # how often a stop asked through another process looks whether the debate ended


async def request_stop(
    sessions: Mapping[str, DebateSession],
    store: Store,
    debate_id: str,
    reason: str,
    wait: float,
    limits: StorageSettings,
    waiting: Waiting | None = None,
) -> StopAnswer:
    """Stop a debate, whichever process runs it; what happened, for the person who asked.

    Here: the debate is told at once, once this process has confirmed it still runs it (a lease
    not renewed while the database was away is confirmed with it first). Elsewhere (or here no
    longer: taken over while this process was paused past its lease): the stop is left in the
    store for the owner, which applies it as it applies relayed votes (at once on Postgres, within
    `storage.poll_seconds` on SQLite). Either way this waits up to `wait` seconds to see the
    debate end, closed with its statistics ("stopped"), else answers "requested" (it will: a
    stop left in the store is applied by the owner, or by the process that takes it over).
    "already_ended" and "no_such_debate" when there is nothing to stop. While the store is
    unavailable the stop waits for it (`core.outlasting`: `waiting` tells the person once), up to
    `storage.outage_limit`, then raises StoreGaveUp; other store errors raise StoreError."""
    session = sessions.get(debate_id)
    if session is not None and not session.done and await confirmed(session.still_ours(), limits, waiting):
        session.request_stop(reason)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(session.wait(), wait)
            return "stopped"
        return "requested"
    record = await outlasting(lambda: store.get_debate(debate_id), limits, waiting)
    if record is None:
        return "no_such_debate"
    if record.status != "running":
        return "already_ended"
    stop = json.dumps({"control": "stop", "reason": reason})
    await outlasting(lambda: store.post_vote(debate_id, stop), limits, waiting)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        await asyncio.sleep(min(STOP_POLL, max(0.0, deadline - time.monotonic())))
        try:
            current = await store.get_debate(debate_id)
        except StoreError:  # the stop is stored: the owner applies it whether or not this sees it
            return "requested"
        if current is None or current.status != "running":
            return "stopped"
    return "requested"


def stop_asked(left: Mapping[str, object]) -> str | None:
    """The reason, when what another process left for a debate (`request_stop`) is a Stop."""
    return str(left.get("reason") or "stopped") if left.get("control") == "stop" else None


async def take_stop(session: DebateSession | None, store: Store) -> None:
    """A debate just taken over, still catching up with its log: a Stop left for it is applied
    now. Only looked at: the votes stay in the store, in the order they were cast, for when it
    is live (one cast while it replays is refused), unless it stops: then they no longer count
    and are taken with the Stop."""
    if session is None or session.done:
        return
    stop = await stop_left_for(store, session.debate_id)
    if stop is not None:
        session.request_stop(stop)
        await store.take_votes(session.debate_id)


async def stop_left_for(store: Store, debate_id: str) -> str | None:
    """The reason of a Stop another process left in the store for the debate (nothing is taken)."""
    left = [stop_asked(json.loads(payload)) for payload in await store.waiting_votes(debate_id)]
    return next((reason for reason in left if reason is not None), None)
