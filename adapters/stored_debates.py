"""Finding a stored debate a person asks about (a transcript, a status), for every front end: one
named by id, only within the person's own workspace or server, else the latest in their channel."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from adapters.host import Host
from core.ports import DebateRecord

RECENT = 200  # how many of the latest debates are searched for a channel's


async def named_debate(rt: Host, debate_id: str, *, platform: str, scope: str) -> DebateRecord | None:
    """The debate with this id if it was held on `platform` in `scope` (else nothing is said of it)."""
    record = await rt.store.get_debate(debate_id.strip())
    if record is None or record.binding.platform != platform or record.binding.scope != scope:
        return None
    return record


async def latest_debate(
    rt: Host,
    *,
    platform: str,
    scope: str,
    channel: str,
    started_here: Callable[[DebateRecord], Awaitable[bool]] | None = None,
    recent: int = RECENT,
) -> DebateRecord | None:
    """The debate running in `channel`, else the latest one held there (`started_here`: also one
    started from it but held elsewhere, such as a thread)."""
    handle = rt.manager.find(platform=platform, channel=channel)
    if handle is not None:
        return await rt.store.get_debate(handle.debate_id)
    for record in await rt.store.list_debates(recent):
        b = record.binding
        if b.platform != platform or b.scope != scope:
            continue
        if b.channel == channel or (started_here is not None and await started_here(record)):
            return record
    return None
