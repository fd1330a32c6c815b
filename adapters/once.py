"""Each inbound request acted on once by the whole bot, whichever worker it reaches.

A platform may deliver one request to several workers (Slack's retries and replays, Discord's
resumed gateway sessions). The first delivery of a request's key claims it in the store (one
conditional insert: exactly one worker wins a race); the key is remembered for a time the platform
module chooses, longer than the platform would deliver the request again.
"""

from __future__ import annotations

import logging

from core.errors import StoreError
from core.ports import Store

log = logging.getLogger(__name__)


async def first_delivery(store: Store, key: str | None, ttl: float) -> bool:
    """True when this is the first delivery of `key` anywhere in the bot (no key: always true).

    When the store cannot answer, the request is handled (a lost request is worse than a rare
    double)."""
    if key is None:
        return True
    try:
        return await store.first_delivery(key, ttl)
    except StoreError as exc:
        log.warning("could not check %s against earlier deliveries: %s", key, exc)
        return True
