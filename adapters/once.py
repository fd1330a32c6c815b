"""Each inbound request acted on once by the whole bot, whichever worker it reaches.

A platform may deliver one request to several workers (Slack's retries and replays, Discord's
resumed gateway sessions). The first delivery of a request's key claims it in the store (one
conditional insert: exactly one worker wins a race); the key is remembered for a time the platform
module chooses, longer than the platform would deliver the request again.
"""

from __future__ import annotations

import asyncio
import logging

from core.errors import StoreError
from core.ports import Store

log = logging.getLogger(__name__)


async def first_delivery(store: Store, key: str | None, ttl: float, within: float | None = None) -> bool:
    """True when this is the first delivery of `key` anywhere in the bot (no key: always true).

    When the store cannot answer (within `within` seconds, if given: for a platform that wants an
    answer soon), the request is handled (a lost request is worse than a rare double)."""
    if key is None:
        return True
    try:
        return await asyncio.wait_for(store.first_delivery(key, ttl), within)
    except (StoreError, TimeoutError) as exc:
        log.warning("could not check %s against earlier deliveries: %s", key, str(exc) or "no answer in time")
        return True
