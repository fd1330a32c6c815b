"""Installing Rostra in many workspaces: Bolt's OAuth v2 flow (HTTP mode) with Rostra's stores, and
the events that take an installation away (`app_uninstalled`, `tokens_revoked`).

    GET /slack/install          → the "Add to Slack" page (sets the state cookie)
    GET /slack/oauth_redirect   → Slack sends the installer back here; the code becomes a bot token
                                  (oauth.v2.access), stored per workspace
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import aiohttp
from slack_bolt import BoltResponse
from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.host import Host
from adapters.slack.errors import InstallationsUnavailable, SlackUnavailable
from adapters.slack.inbound.modal.blocks import TOPIC_BLOCK
from adapters.slack.install.installations import InstallationStore
from adapters.slack.install.scopes import BOT_SCOPES
from adapters.slack.install.workspaces import WorkspaceFronts, stop_workspace
from adapters.slack.render.messages import refusal

log = logging.getLogger(__name__)

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"


def oauth_settings(
    *,
    client_id: str,
    client_secret: str,
    installations: InstallationStore,
    states: AsyncOAuthStateStore,
    redirect_uri: str | None = None,
) -> AsyncOAuthSettings:
    return AsyncOAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        scopes=sorted(BOT_SCOPES),
        user_scopes=[],
        redirect_uri=redirect_uri,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        installation_store=installations,
        state_store=states,
        logger=log,
    )


def answer_when_unavailable(app: AsyncApp) -> None:
    """Bolt authorizes every request first: from the workspace's installation (many workspaces) or
    from who the bot is (one: `one_workspace.py`). When the database or Slack does not answer
    (`InstallationsUnavailable`, `SlackUnavailable`), a person is told so where Slack shows an
    answer: a slash command in its reply, a click through its `response_url`, the Start modal's
    submit under its topic (the modal stays open, as filled in). An event is answered 500, so Slack
    sends it again later. Other errors are logged, as Bolt's own handler does."""

    async def on_error(error: Exception, body: dict[str, Any]) -> BoltResponse | None:
        if not isinstance(error, InstallationsUnavailable | SlackUnavailable):
            log.error("a Slack request failed: %r", error, exc_info=error)
            return None
        log.warning("a Slack request not served: it could not be authorized (%s)", error.detail)
        text = refusal(str(error))
        if body.get("command"):
            return BoltResponse(status=200, body={"response_type": "ephemeral", "text": text})
        if body.get("type") == "view_submission":
            return BoltResponse(status=200, body={"response_action": "errors", "errors": {TOPIC_BLOCK: text}})
        url = body.get("response_url")
        if body.get("type") == "block_actions" and isinstance(url, str):
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                await AsyncWebhookClient(url).send(
                    text=text, response_type="ephemeral", replace_original=False
                )
            return BoltResponse(status=200, body="")
        return None

    app.error(on_error)


def register_uninstall(app: AsyncApp, fronts: WorkspaceFronts) -> None:
    async def on_uninstalled(body: dict[str, Any]) -> None:
        team = str(body.get("team_id") or "")
        if team:
            await fronts.uninstalled(team)

    async def on_tokens_revoked(body: dict[str, Any], event: dict[str, Any]) -> None:
        team = str(body.get("team_id") or "")
        bots = (event.get("tokens") or {}).get("bot") or []
        if team and bots:  # only the bot token matters: Rostra asks for no user tokens
            await fronts.uninstalled(team)

    app.event("app_uninstalled")(on_uninstalled)
    app.event("tokens_revoked")(on_tokens_revoked)


def register_single_uninstall(app: AsyncApp, rt: Host) -> None:
    """One workspace (one token): removing the app stops its debates (the token is dead anyway)."""

    async def on_removed(body: dict[str, Any], event: dict[str, Any]) -> None:
        if event.get("type") == "tokens_revoked" and not (event.get("tokens") or {}).get("bot"):
            return
        team = str(body.get("team_id") or "")
        await stop_workspace(rt, team)
        log.warning("Slack workspace %s removed Rostra: SLACK_BOT_TOKEN no longer works", team)

    app.event("app_uninstalled")(on_removed)
    app.event("tokens_revoked")(on_removed)
