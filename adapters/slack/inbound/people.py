"""Which Slack users are bots: their reactions are no one's vote (Discord ignores bots likewise).

Slack's reaction events carry no bot flag, so each user who reacts is looked up once with
`users.info` (scope `users:read`) and the answer cached for the life of the process. A lookup that
fails (Slack unreachable, an install without the scope) counts the reaction as a person's, is not
cached, and is tried again next time.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import OrderedDict

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

CACHED_USERS = 10_000
SLACKBOT = "USLACKBOT"


class BotUsers:
    """Whether a user id is a bot (an app's bot user, or Slackbot), asked of Slack once per user."""

    def __init__(self, client: AsyncWebClient, size: int = CACHED_USERS) -> None:
        self._client = client
        self._size = size
        self._known: OrderedDict[str, bool] = OrderedDict()
        self._asking: dict[str, asyncio.Future[bool]] = {}  # one lookup per user at a time

    async def is_bot(self, user: str) -> bool:
        if user == SLACKBOT:
            return True
        if user in self._known:
            self._known.move_to_end(user)
            return self._known[user]
        asking = self._asking.get(user)
        if asking is None:
            asking = self._asking[user] = asyncio.ensure_future(self._ask(user))
            asking.add_done_callback(lambda _: self._asking.pop(user, None))
        return await asyncio.shield(asking)

    async def _ask(self, user: str) -> bool:
        try:
            response = await self._client.users_info(user=user)
        except SlackApiError as exc:
            error = exc.response.get("error")
            log.info("could not tell whether %s is a bot (%s); counting it as a person", user, error)
            return False
        except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
            log.info("could not tell whether %s is a bot (%r); counting it as a person", user, exc)
            return False
        found = response.get("user") or {}
        bot = bool(found.get("is_bot") or found.get("is_app_user"))
        self._known[user] = bot
        while len(self._known) > self._size:
            self._known.popitem(last=False)
        return bot


_BY_CLIENT: weakref.WeakKeyDictionary[AsyncWebClient, BotUsers] = weakref.WeakKeyDictionary()


def bot_users_of(client: AsyncWebClient) -> BotUsers:
    """The workspace's bot users (one Web API client per workspace token): reaction events and the
    reading of a card's reactions ask the same cache."""
    users = _BY_CLIENT.get(client)
    if users is None:
        users = _BY_CLIENT[client] = BotUsers(client)
    return users
