"""Serving the app: Socket Mode (a WebSocket out to Slack) or HTTP (Slack posts to /slack/events)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError

from adapters.slack.app import SlackApp
from adapters.slack.errors import SlackConfigError
from adapters.slack.scopes import BOT_SCOPES, EVENTS_PATH

log = logging.getLogger(__name__)


async def check_token(app: SlackApp) -> str:
    """Ask Slack who we are; warn about missing scopes. Returns the workspace name."""
    try:
        response = await app.client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error") or "error"
        raise SlackConfigError(f"Slack refused SLACK_BOT_TOKEN ({error}); check the token.") from None
    header = next((v for k, v in response.headers.items() if k.lower() == "x-oauth-scopes"), "")
    granted = {s.strip() for s in str(header).split(",") if s.strip()}
    missing = sorted(BOT_SCOPES - granted)
    if granted and missing:
        log.warning(
            "the Slack app lacks scopes %s; reinstall it from slack-manifest.yaml", ", ".join(missing)
        )
    return str(response.get("team") or response.get("team_id") or "the workspace")


Ready = Callable[[], Awaitable[object]]


async def run_socket_mode(
    app: SlackApp, app_token: str, stop: asyncio.Event, *, ready: Ready | None = None
) -> None:
    """Connect to Slack over a WebSocket and serve until `stop` is set; `ready` runs once connected."""
    handler = AsyncSocketModeHandler(app, app_token=app_token)
    try:
        await handler.connect_async()  # type: ignore[no-untyped-call]
        log.info("connected to Slack in Socket Mode")
        if ready is not None:
            await ready()
        await stop.wait()
    finally:
        await handler.close_async()  # type: ignore[no-untyped-call]


async def run_http(
    app: SlackApp, *, host: str, port: int, stop: asyncio.Event, ready: Ready | None = None
) -> None:
    """Serve Slack's requests at http://host:port/slack/events until `stop` is set; `ready` runs
    once the server listens."""
    runner = web.AppRunner(app.web_app(path=EVENTS_PATH, port=port))
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        log.info("listening for Slack on http://%s:%d%s", host, port, EVENTS_PATH)
        if ready is not None:
            await ready()
        await stop.wait()
    finally:
        await runner.cleanup()
