"""The marker every message Rostra posts to Slack carries (message metadata with its key): a post
whose answer was lost is found again by reading messages back with their metadata, instead of being
posted twice or left behind (`sender.py` in a thread, `opening.py` in the channel)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MARKER = "rostra_message"
"""Message metadata event type: every message Rostra posts carries its key, so that a post whose
answer was lost can be found in the thread instead of being posted twice."""


def marked(key: str) -> dict[str, Any]:
    """The metadata a message posted with `key` carries."""
    return {"event_type": MARKER, "event_payload": {"key": key}}


def key_of(message: Mapping[str, Any]) -> str | None:
    """The key a message Rostra posted carries in its metadata (read back with it), else None."""
    metadata = message.get("metadata") or {}
    key = (metadata.get("event_payload") or {}).get("key") if metadata.get("event_type") == MARKER else None
    return str(key) if key else None
