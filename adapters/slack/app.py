"""`create_app(rt)`: the Bolt app with Rostra's listeners, a rate-limit-aware Web API client, and the
front end that owns every debate's delivery."""

from __future__ import annotations

import logging

from pydantic import SecretStr
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.card_buttons import register_card_buttons
from adapters.slack.controller import SlackFrontEnd
from adapters.slack.errors import SlackConfigError
from adapters.slack.home_flow import register_home
from adapters.slack.listeners import register
from adapters.slack.modal_flow import register_modal
from adapters.slack.settings import SlackSettings
from core.session import DebateHandle

log = logging.getLogger(__name__)

CONNECTION_RETRIES = 2


class SlackApp(AsyncApp):
    """An AsyncApp that also holds Rostra's Slack front end; `aclose()` stops its deliveries."""

    front: SlackFrontEnd

    async def resume_debates(self) -> list[DebateHandle]:
        """Pick up the Slack debates a restart cut short, each in its own thread (call once serving)."""
        return await self.front.resume()

    async def aclose(self) -> None:
        await self.front.aclose()


def make_web_client(token: str, settings: SlackSettings) -> AsyncWebClient:
    """A Web API client that waits out 429s (Retry-After) and retries dropped connections."""
    return AsyncWebClient(
        token=token,
        base_url=settings.api_url.rstrip("/") + "/",
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(max_retry_count=CONNECTION_RETRIES),
            AsyncRateLimitErrorRetryHandler(max_retry_count=settings.rate_limit_retries),
        ],
    )


def _value(secret: SecretStr | None) -> str | None:
    value = secret.get_secret_value().strip() if secret is not None else ""
    return value or None


def create_app(rt: Host, *, socket_mode: bool | None = None) -> SlackApp:
    """The Slack app for `rt`, not yet serving. Socket Mode (the default when SLACK_APP_TOKEN is set)
    needs no signing secret; HTTP mode needs SLACK_SIGNING_SECRET. Raises SlackConfigError."""
    secrets = rt.secrets
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
    app = SlackApp(
        client=client,
        signing_secret=signing_secret,
        request_verification_enabled=signing_secret is not None,
        name="rostra",
    )
    app.front = SlackFrontEnd(rt, client)
    register_modal(app, app.front)  # first: it takes `/debate` with no text
    register(app, app.front)
    register_home(app, rt)
    register_card_buttons(app, app.front)
    return app
