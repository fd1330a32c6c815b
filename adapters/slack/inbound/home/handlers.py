"""Bolt listeners for the App Home tab (`app_home_opened` → `views.publish`) and direct messages to
the app (`message.im` → a short helpful answer)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.delivery.failures import NETWORK_ERRORS
from adapters.slack.inbound.home.blocks import DM_ANSWER, DebateLine, home_view

log = logging.getLogger(__name__)

RECENT_SCANNED = 200  # stored debates looked through for this workspace's
SHOWN = 10


async def workspace_debates(rt: Host, team: str) -> tuple[list[DebateLine], list[DebateLine]]:
    """This workspace's running debates and its most recent finished ones (newest first)."""
    running: list[DebateLine] = []
    recent: list[DebateLine] = []
    for record in await rt.store.list_debates(RECENT_SCANNED):
        binding = record.binding
        if binding.platform != PLATFORM or binding.scope != team:
            continue
        shelf = running if record.status == "running" else recent
        if len(shelf) >= SHOWN:
            continue
        where = await rt.store.binding_values(record.id)
        shelf.append(
            DebateLine(
                topic=record.topic,
                format=record.format,
                status=record.status,
                channel=where.get("channel") or binding.channel,
                thread_ts=where.get("thread_ts"),
                reason=record.reason,
            )
        )
    return running, recent


async def publish_home(rt: Host, client: AsyncWebClient, *, team: str, user: str) -> None:
    running, recent = await workspace_debates(rt, team)
    try:
        await client.views_publish(user_id=user, view=home_view(running, recent))
    except NETWORK_ERRORS as exc:
        log.warning("could not publish the Home tab for %s: %r", user, exc)


def register_home(app: AsyncApp, rt: Host) -> None:
    async def on_home_opened(body: dict[str, Any], event: dict[str, Any], client: AsyncWebClient) -> None:
        if event.get("tab") != "home":
            return
        team = str(body.get("team_id") or "")
        await publish_home(rt, client, team=team, user=str(event.get("user") or ""))

    async def on_message(event: dict[str, Any], client: AsyncWebClient) -> None:
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id"):
            return  # only people writing to the app; never answer a bot (or Rostra itself)
        try:
            await client.chat_postMessage(
                channel=str(event.get("channel") or ""), text=DM_ANSWER, thread_ts=event.get("thread_ts")
            )
        except NETWORK_ERRORS as exc:
            log.warning("could not answer a direct message: %r", exc)

    app.event("app_home_opened")(on_home_opened)
    app.event("message")(on_message)
