"""Slack payloads → typed requests (the adapter's edge: dicts stop here)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from adapters.slack.inbound.documents import SlackFile
from adapters.slack.render.text import from_slack


@dataclass(frozen=True)
class Request:
    """Someone asked Rostra for something: by mentioning it, or with `/debate`."""

    team: str
    channel: str
    user: str
    text: str  # plain text of the command, without the mention
    thread_ts: str | None = None
    slash: bool = False
    files: tuple[SlackFile, ...] = ()  # attached to the mention (a slash command carries none)


@dataclass(frozen=True)
class ReactionRequest:
    channel: str
    ts: str
    user: str
    name: str
    added: bool
    at: float | None
    """When the person reacted (the event's `event_ts`): reactions count in that order, not in the
    order their events arrive (`adapters/reaction_ballot.py`)."""
    team: str = ""  # the workspace it came from (many workspaces: whose front end takes it)


def _without_mention(text: str, bot_user_id: str | None) -> str:
    if bot_user_id:
        return re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return re.sub(r"^\s*<@[A-Z0-9]+(?:\|[^>]*)?>", " ", text)


def mention_request(body: dict[str, Any], event: dict[str, Any], bot_user_id: str | None) -> Request:
    return Request(
        team=str(body.get("team_id") or event.get("team") or ""),
        channel=str(event.get("channel") or ""),
        user=str(event.get("user") or ""),
        text=from_slack(_without_mention(str(event.get("text") or ""), bot_user_id)).strip(),
        thread_ts=event.get("thread_ts"),
        files=tuple(SlackFile.from_slack(f) for f in event.get("files") or [] if isinstance(f, dict)),
    )


def slash_request(command: dict[str, Any]) -> Request:
    return Request(
        team=str(command.get("team_id") or ""),
        channel=str(command.get("channel_id") or ""),
        user=str(command.get("user_id") or ""),
        text=from_slack(str(command.get("text") or "")).strip(),
        slash=True,
    )


def reaction_request(event: dict[str, Any], *, added: bool, team: str = "") -> ReactionRequest | None:
    """None for reactions on anything but a message."""
    item = event.get("item") or {}
    if item.get("type") != "message":
        return None
    return ReactionRequest(
        channel=str(item.get("channel") or ""),
        ts=str(item.get("ts") or ""),
        user=str(event.get("user") or ""),
        name=str(event.get("reaction") or ""),
        added=added,
        at=_time_of(event.get("event_ts")),
        team=team,
    )


def _time_of(event_ts: object) -> float | None:
    try:
        at = float(str(event_ts))
    except ValueError:
        return None  # no usable time: applied as it comes
    return at if math.isfinite(at) else None
