"""Who may start debates (`slack.starter_users`, members of `slack.starter_groups`; both empty:
anyone) and who may stop one: its starter, `slack.admin_users`, members of `slack.admin_groups`, or
the creator of the debate's channel (`conversations.info`). Being allowed to start is not being
allowed to stop another person's debate.

Group members are looked up with `usergroups.users.list` and remembered for `group_cache_seconds`.
"""

from __future__ import annotations

import asyncio

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.errors import PermissionCheckError
from adapters.slack.settings import SlackSettings


class StarterPolicy:
    def __init__(
        self, settings: SlackSettings, *, users: list[str] | None = None, groups: list[str] | None = None
    ) -> None:
        self._users = frozenset(settings.starter_users if users is None else users)
        self._groups = tuple(settings.starter_groups if groups is None else groups)
        self._ttl = settings.group_cache_seconds
        self._members: dict[str, tuple[float, frozenset[str]]] = {}

    @property
    def restricted(self) -> bool:
        return bool(self._users or self._groups)

    async def allows(self, client: AsyncWebClient, user: str) -> bool:
        """Raises PermissionCheckError when a group cannot be read."""
        if not self.restricted or user in self._users:
            return True
        for group in self._groups:
            if user in await self._group_members(client, group):
                return True
        return False

    async def _group_members(self, client: AsyncWebClient, group: str) -> frozenset[str]:
        now = asyncio.get_running_loop().time()
        cached = self._members.get(group)
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        try:
            response = await client.usergroups_users_list(usergroup=group)
        except SlackApiError as exc:
            error = exc.response.get("error") or "error"
            raise PermissionCheckError(
                f"I couldn't read the user group {group} ({error}), so I can't tell whether you may"
                " start debates. Ask whoever runs Rostra to check slack.starter_groups."
            ) from None
        except SlackClientError as exc:
            raise PermissionCheckError(f"I couldn't reach Slack to check the user group {group}.") from exc
        members = frozenset(str(u) for u in response.get("users") or [])
        self._members[group] = (now, members)
        return members


class StopPolicy:
    """Who may stop a debate someone else started (see the module's docstring)."""

    def __init__(self, settings: SlackSettings) -> None:
        self._admins = StarterPolicy(settings, users=settings.admin_users, groups=settings.admin_groups)

    async def allows(self, client: AsyncWebClient, user: str, *, starter: str, channel: str) -> bool:
        """Raises PermissionCheckError when a group or the channel cannot be read."""
        if user == starter:
            return True
        if self._admins.restricted and await self._admins.allows(client, user):
            return True
        return await _channel_creator(client, channel) == user


async def _channel_creator(client: AsyncWebClient, channel: str) -> str | None:
    try:
        response = await client.conversations_info(channel=channel)
    except SlackApiError as exc:
        error = exc.response.get("error") or "error"
        raise PermissionCheckError(f"I couldn't read this channel ({error}) to check who may stop.") from None
    except SlackClientError as exc:
        raise PermissionCheckError("I couldn't reach Slack to check who may stop this debate.") from exc
    creator = (response.get("channel") or {}).get("creator")
    return str(creator) if creator else None
