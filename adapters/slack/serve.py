"""Serving the app: Socket Mode (a WebSocket out to Slack) or HTTP (Slack posts to /slack/events)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError

from adapters.slack.app import SlackApp
from adapters.slack.delivery.failures import ambiguous
from adapters.slack.errors import SlackConfigError, SlackUnavailable
from adapters.slack.install.scopes import BOT_SCOPES, EVENTS_PATH

log = logging.getLogger(__name__)


async def check_token(app: SlackApp) -> str:
    """Ask Slack who we are; warn about missing scopes. Returns the workspace name. Raises
    SlackConfigError when Slack refuses the token, SlackUnavailable when Slack is failing."""
    try:  # kept: every request is authorized from this answer (adapters.slack.install.one_workspace)
        response = await (app.one_workspace.who_am_i() if app.one_workspace else app.client.auth_test())
    except SlackApiError as exc:
        error = exc.response.get("error") or "error"
        if ambiguous(exc):  # Slack failing (a 5xx after slack_sdk's retries): not the token's fault
            raise SlackUnavailable(f"auth.test: HTTP {exc.response.status_code}, {error}") from None
        raise SlackConfigError(f"Slack refused SLACK_BOT_TOKEN ({error}); check the token.") from None
    header = next((v for k, v in response.headers.items() if k.lower() == "x-oauth-scopes"), "")
    granted = {s.strip() for s in str(header).split(",") if s.strip()}
    missing = sorted(BOT_SCOPES - granted)
    if granted and missing:
        log.warning(
            "the Slack app lacks scopes %s; reinstall it from slack-manifest.yaml", ", ".join(missing)
        )
    return str(response.get("team") or response.get("team_id") or "the workspace")


async def check_app_token(app: SlackApp, app_token: str) -> str:
    """Ask Slack for a Socket Mode URL with the app token (slack_sdk would otherwise retry a bad
    token forever, logging a traceback every few seconds). Returns the URL, to connect to."""
    try:
        response = await app.client.apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        error = exc.response.get("error") or "error"
        if ambiguous(exc):
            raise SlackUnavailable(
                f"apps.connections.open: HTTP {exc.response.status_code}, {error}"
            ) from None
        raise SlackConfigError(f"Slack refused SLACK_APP_TOKEN ({error}); check the token.") from None
    return str(response["url"])


Ready = Callable[[], Awaitable[object]]


async def run_socket_mode(
    app: SlackApp,
    app_token: str,
    stop: asyncio.Event,
    *,
    ready: Ready | None = None,
    url: str | None = None,
) -> None:
    """Connect to Slack over a WebSocket and serve until `stop` is set; `ready` runs once connected.
    `url`: a Socket Mode URL already issued (see `check_app_token`). `stop` also ends a connection
    attempt that does not succeed."""
    handler = AsyncSocketModeHandler(app, app_token=app_token)
    if url is not None:
        handler.client.wss_uri = url
    rereading: set[asyncio.Task[None]] = set()
    hellos = 0

    async def on_hello(_client: object, message: dict[str, Any], _raw: str | None) -> None:
        """Slack says hello on every connection. Past the first, events sent while the socket was
        down come again only a minute or more later: the open vote cards are read at once."""
        nonlocal hellos
        if message.get("type") != "hello":
            return
        hellos += 1
        if hellos > 1:
            log.info("reconnected to Slack; reading the open vote cards again")
            task = asyncio.create_task(_read_cards_again(app), name="slack-reread-cards")
            rereading.add(task)
            task.add_done_callback(rereading.discard)

    handler.client.message_listeners.append(on_hello)
    try:
        connecting = asyncio.ensure_future(handler.connect_async())  # type: ignore[no-untyped-call]
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({connecting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (connecting, stopping):
                task.cancel()
        if stop.is_set():
            return
        connecting.result()  # a failure to connect surfaces here
        log.info("connected to Slack in Socket Mode")
        if ready is not None:
            await ready()
        await stop.wait()
    finally:
        for task in list(rereading):
            task.cancel()
        await handler.close_async()  # type: ignore[no-untyped-call]


async def _read_cards_again(app: SlackApp) -> None:
    try:
        await app.front.read_cards_again()
    except Exception:
        log.exception("could not read the vote cards again after reconnecting to Slack")


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
