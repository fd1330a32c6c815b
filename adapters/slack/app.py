"""`create_app(rt)`: the Bolt app with Rostra's listeners, a rate-limit-aware Web API client, and the
front end that owns every debate's delivery."""

from __future__ import annotations

import logging

from aiohttp import web
from pydantic import SecretStr
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.delivery.rates import RateWindows
from adapters.host import Host
from adapters.slack.ballots.buttons.handlers import register_ballot_buttons
from adapters.slack.controls.handlers import register_card_buttons
from adapters.slack.delivery.metered import MeteredWebClient, counting_retries
from adapters.slack.delivery.rates import limits_for, share_rates, slack_share
from adapters.slack.delivery.retry import retry_handlers
from adapters.slack.errors import SlackConfigError
from adapters.slack.inbound.dispatch import SlackFrontEnd
from adapters.slack.inbound.gate import gate
from adapters.slack.inbound.home.handlers import register_home
from adapters.slack.inbound.listeners import register
from adapters.slack.inbound.modal.handlers import register_modal
from adapters.slack.install.installations import OAuthStores
from adapters.slack.install.oauth import (
    answer_when_unavailable,
    oauth_settings,
    register_single_uninstall,
    register_uninstall,
)
from adapters.slack.install.one_workspace import OneWorkspace
from adapters.slack.install.workspaces import WorkspaceFronts
from adapters.slack.settings import SlackSettings
from core.session import DebateHandle

log = logging.getLogger(__name__)


class SlackApp(AsyncApp):
    """An AsyncApp that also holds Rostra's Slack front end; `aclose()` stops its deliveries."""

    front: SlackFrontEnd
    one_workspace: OneWorkspace | None = None  # who the bot is, for one workspace's requests

    async def resume_debates(self) -> list[DebateHandle]:
        """Pick up the Slack debates a restart cut short, each in its own thread (call once serving)."""
        return await self.front.resume()

    async def aclose(self) -> None:
        await self.front.aclose()

    def web_app(self, path: str = "/slack/events", port: int = 3000) -> web.Application:
        """Bolt's aiohttp app behind Rostra's gate (adapters.slack.inbound.gate): Slack's signature
        checked before any body is parsed, the install page limited per client."""
        served = super().web_app(path=path, port=port)
        if not any(getattr(m, "rostra_gate", False) for m in served.middlewares):
            flow = self.oauth_flow
            middleware = gate(
                self._signing_secret,
                events_path=path,
                install_path=flow.install_path if flow is not None else None,
                redirect_path=flow.redirect_uri_path if flow is not None else None,
            )
            middleware.rostra_gate = True  # type: ignore[attr-defined]
            served.middlewares.append(middleware)
        return served


def make_web_client(token: str | None, settings: SlackSettings) -> AsyncWebClient:
    """A Web API client that waits out 429s (Retry-After) and retries dropped connections and 5xx
    for the calls that are safe to repeat (see adapters/slack/delivery/retry.py); it reports requests, 429s
    and retries (adapters.slack.delivery.metered)."""
    # the workspace's rate windows, shared by its debates (and split among the live workers)
    rates = RateWindows(limits_for(settings.install), slack_share)
    client = MeteredWebClient(
        token=token,
        base_url=settings.api_url.rstrip("/") + "/",
        retry_handlers=[counting_retries(h) for h in retry_handlers(settings.rate_limit_retries, rates)],
    )
    share_rates(client, rates)
    return client


def _value(secret: SecretStr | None) -> str | None:
    value = secret.get_secret_value().strip() if secret is not None else ""
    return value or None


def create_app(
    rt: Host, *, socket_mode: bool | None = None, oauth_stores: OAuthStores | None = None
) -> SlackApp:
    """The Slack app for `rt`, not yet serving. Socket Mode (the default when SLACK_APP_TOKEN is set)
    needs no signing secret; HTTP mode needs SLACK_SIGNING_SECRET. With SLACK_CLIENT_ID and
    SLACK_CLIENT_SECRET it serves many workspaces (OAuth install, tokens in `oauth_stores`) instead
    of the one SLACK_BOT_TOKEN belongs to. Raises SlackConfigError."""
    secrets = rt.secrets
    if _value(secrets.slack_client_id) or _value(secrets.slack_client_secret):
        return create_oauth_app(rt, socket_mode=socket_mode, stores=oauth_stores)
    token = _value(secrets.slack_bot_token)
    if token is None:
        raise SlackConfigError(
            "SLACK_BOT_TOKEN is not set: install the app (see slack-manifest.yaml) and export its"
            " Bot User OAuth Token (xoxb-…)."
        )
    if not token.startswith("xoxb-"):
        raise SlackConfigError("SLACK_BOT_TOKEN must be a bot token (it starts with xoxb-).")
    if socket_mode is None:
        socket_mode = _value(secrets.slack_app_token) is not None
    signing_secret = _value(secrets.slack_signing_secret)
    if not socket_mode and signing_secret is None:
        raise SlackConfigError(
            "SLACK_SIGNING_SECRET is not set: HTTP mode verifies every request from Slack with it"
            " (Basic Information → App Credentials). Or set SLACK_APP_TOKEN to use Socket Mode."
        )
    client = make_web_client(token, rt.config.slack)
    one_workspace = OneWorkspace(client, token)
    app = SlackApp(
        # Bolt makes each request's client from this one, with the token `authorize` gives it
        client=make_web_client(None, rt.config.slack),
        authorize=one_workspace.authorize(),
        signing_secret=signing_secret,
        request_verification_enabled=signing_secret is not None,
        name="rostra",
    )
    app.front = SlackFrontEnd(rt, client)
    app.one_workspace = one_workspace
    _register(app, rt)
    register_single_uninstall(app, rt)
    answer_when_unavailable(app)
    return app


def _register(app: SlackApp, rt: Host) -> None:
    register_modal(app, app.front)  # first: it takes `/debate` with no text
    register(app, app.front)
    register_home(app, rt)
    register_card_buttons(app, app.front)
    register_ballot_buttons(app, rt)


def create_oauth_app(rt: Host, *, socket_mode: bool | None, stores: OAuthStores | None) -> SlackApp:
    """Many workspaces: Bolt's OAuth v2 install flow over HTTP, a bot token per workspace."""
    secrets = rt.secrets
    client_id, client_secret = _value(secrets.slack_client_id), _value(secrets.slack_client_secret)
    if client_id is None or client_secret is None:
        raise SlackConfigError(
            "Installing in many workspaces needs both SLACK_CLIENT_ID and SLACK_CLIENT_SECRET"
            " (Basic Information → App Credentials); unset both to serve one workspace."
        )
    if socket_mode:
        raise SlackConfigError(
            "Installing in many workspaces runs in HTTP mode (Slack's OAuth redirect needs a public"
            " URL): unset SLACK_APP_TOKEN."
        )
    signing_secret = _value(secrets.slack_signing_secret)
    if signing_secret is None:
        raise SlackConfigError(
            "SLACK_SIGNING_SECRET is not set: HTTP mode verifies every request from Slack with it"
            " (Basic Information → App Credentials)."
        )
    if stores is None:
        raise SlackConfigError("Installing in many workspaces needs a store for the installations.")
    settings = rt.config.slack
    client = make_web_client(None, settings)
    app = SlackApp(
        client=client,
        signing_secret=signing_secret,
        oauth_settings=oauth_settings(
            client_id=client_id,
            client_secret=client_secret,
            installations=stores.installations,
            states=stores.states,
            redirect_uri=settings.oauth_redirect_url or None,
        ),
        name="rostra",
    )
    fronts = WorkspaceFronts(rt, client, stores.installations, make_web_client)
    app.front = fronts
    _register(app, rt)
    register_uninstall(app, fronts)
    answer_when_unavailable(app)
    return app
