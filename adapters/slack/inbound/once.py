"""Each inbound Slack request acted on once by the whole bot, whichever worker it reaches.

Slack redelivers an event it thinks was not acknowledged (the same `event_id`, with an
`X-Slack-Retry-Num` header), possibly to another worker behind the same URL, and a captured signed
request can be replayed while its signature is accepted. The first delivery of a key claims it in
the store (adapters/once.py); the key is remembered for `DELIVERY_TTL` seconds, longer than Slack's
retries (up to about five minutes) and the five minutes a signature is accepted.
"""

from __future__ import annotations

from typing import Any

from adapters import once
from core.ports import Store

DELIVERY_TTL = 900.0


def event_key(body: dict[str, Any]) -> str | None:
    """The key of an Events API delivery (its retries carry the same one), or None."""
    event_id = body.get("event_id")
    return f"slack:{body.get('team_id') or ''}:event:{event_id}" if event_id else None


def trigger_key(payload: dict[str, Any], kind: str = "trigger") -> str | None:
    """The key of a slash command or a click (`trigger_id`, unique to each interaction), or None."""
    trigger = payload.get("trigger_id")
    if not trigger:
        return None
    team = payload.get("team_id") or (payload.get("team") or {}).get("id") or ""
    return f"slack:{team}:{kind}:{trigger}"


async def first_delivery(store: Store, key: str | None) -> bool:
    """True when this is the first delivery of `key` anywhere in the bot (adapters/once.py); each
    worker still drops the repeats it has seen itself."""
    return await once.first_delivery(store, key, DELIVERY_TTL)
