"""Authorizing each request for the one workspace SLACK_BOT_TOKEN belongs to.

Bolt's own single-workspace authorization asks Slack who the bot is (`auth.test`) on a process's
first request, although `rostra slack` has just asked at startup (`serve.check_token`); with Slack
failing at that moment it answers the request that the installation is "no longer available" (a
person's slash command shows that; an event is answered 200, so Slack never sends it again). Here
the startup's answer is kept and every request is authorized from it; asked only if startup did not,
and Slack not answering then is `SlackUnavailable`, which `oauth.answer_when_unavailable` turns into
words for a person and a 500 for an event (Slack sends it again later).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack.delivery.failures import NETWORK_ERRORS, ambiguous
from adapters.slack.errors import SlackUnavailable


class OneWorkspace:
    """Bolt's `authorize` for one workspace: who the bot is, learned once."""

    def __init__(self, client: AsyncWebClient, token: str) -> None:
        self._client, self._token = client, token
        self._bot: Mapping[str, Any] | None = None  # auth.test's answer

    async def who_am_i(self) -> AsyncSlackResponse:
        """Ask Slack who the bot is (`auth.test`), and keep the answer for every request after."""
        response = await self._client.auth_test()
        self._bot = dict(response.data) if isinstance(response.data, dict) else {}
        return response

    def authorize(self) -> Callable[..., Awaitable[AuthorizeResult]]:
        """Bolt's `authorize`: a function, since Bolt passes what its parameters name (a method's
        `self` included)."""

        async def authorize(
            enterprise_id: str | None, team_id: str | None, user_id: str | None
        ) -> AuthorizeResult:
            return await self._authorized(enterprise_id, team_id, user_id)

        return authorize

    async def _authorized(
        self, enterprise_id: str | None, team_id: str | None, user_id: str | None
    ) -> AuthorizeResult:
        if self._bot is None:  # startup did not ask (or Slack failed it): ask now
            try:
                await self.who_am_i()
            except (SlackApiError, *NETWORK_ERRORS) as exc:
                if not ambiguous(exc):
                    raise  # Bolt says the app is not installed (a revoked token, say)
                raise SlackUnavailable(repr(exc)) from exc
        bot = self._bot or {}
        return AuthorizeResult(
            enterprise_id=bot.get("enterprise_id") or enterprise_id,
            team_id=bot.get("team_id") or team_id,
            bot_user_id=bot.get("user_id"),
            bot_id=bot.get("bot_id"),
            bot_token=self._token,
            user_id=user_id,
        )
