"""A person's Stop, typed or clicked, the same on both front ends: the channel's running debate is
found in the store (a database outage waited out and said once: `core.outlasting`), the front end
checks that this person may stop it, and the stop goes to whichever worker runs the debate
(`DebateManager.request_stop`). Each front end words the outcome its own way (a thread link on
Discord, the topic on Slack); store errors other than an outage are the caller's."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from core.errors import StoreGaveUp
from core.manager import DebateManager
from core.outlasting import Waiting, outlasting, stop_not_kept, stop_waits
from core.ports import DebateRecord
from core.stopping import StopAnswer

log = logging.getLogger(__name__)

STOP_WAIT = 5.0  # seconds to watch the debate end (whichever worker runs it), before answering

Outcome = StopAnswer | Literal["nothing_running", "refused"]


@dataclass(frozen=True)
class StopOutcome:
    outcome: Outcome
    record: DebateRecord | None = None  # the debate the person meant, once found
    refusal: str = ""  # with "refused": what to tell the person


async def stop_running(
    manager: DebateManager,
    find: Callable[[], Awaitable[DebateRecord | None]],
    may_stop: Callable[[DebateRecord], Awaitable[str | None]],
    *,
    reason: str,
    tell: Callable[[str], Awaitable[None]],
) -> StopOutcome:
    """Stop the debate `find` names if `may_stop` (None: allowed; else the refusal to say). `tell`
    says once that the stop waits for the database, and that it was not kept if that outlasts
    `storage.outage_limit`."""
    limits = manager.settings.storage
    # "it waits" is said beside the stop, which goes on as soon as the store is back: a platform
    # failing as it is said holds the stop back no longer; the outcome is said after it
    async with Waiting(lambda: tell(stop_waits(limits))) as waiting:
        try:
            record = await outlasting(find, limits, waiting)
            if record is None:
                return StopOutcome("nothing_running")
            refusal = await may_stop(record)
            if refusal is not None:
                return StopOutcome("refused", record, refusal)
            log.info("debate %s: stop asked (%s)", record.id, reason)
            # one path wherever it runs: a copy here that another worker took over is not the debate
            answer = await manager.request_stop(record.id, reason, wait=STOP_WAIT, waiting=waiting)
        except StoreGaveUp:
            return StopOutcome("refused", refusal=stop_not_kept(limits))
    return StopOutcome(answer, record)
