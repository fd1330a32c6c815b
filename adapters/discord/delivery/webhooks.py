"""One webhook per channel for persona messages: cached, found again after a restart (by name and
owner), and recreated when someone deleted it; and the names personas may post under there."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

import discord

from adapters.delivery import shares
from adapters.delivery.rates import Limit, RateWindows

log = logging.getLogger(__name__)

USERNAME_LIMIT = 80
"""Discord's longest webhook username."""
RESERVED = re.compile("clyde|discord", re.IGNORECASE)
"""Words Discord refuses in webhook usernames (400, Invalid Form Body)."""
JOINER = "\u200d"


def webhook_username(name: str) -> str:
    """`name` as a webhook may post under it: a zero-width joiner after the first letter of each
    word Discord reserves (it looks the same), clipped to Discord's length."""
    for cut in range(min(len(name), USERNAME_LIMIT), 0, -1):
        safe = RESERVED.sub(lambda m: m.group(0)[0] + JOINER + m.group(0)[1:], name[:cut])
        if len(safe) <= USERNAME_LIMIT:
            return safe
    return name[:USERNAME_LIMIT]


WebhookHost = discord.TextChannel | discord.ForumChannel
"""Channels that own webhooks (a debate thread's parent)."""


WEBHOOK_LIMIT: Limit = (5, 2.0)  # Discord: 5 requests per 2 s per webhook
CHANNEL_LIMIT: Limit = (5, 5.0)  # Discord: 5 messages per 5 s per channel (or thread)
GLOBAL_LIMIT: Limit = (45, 1.0)  # Discord: 50 requests per second per bot (a margin for other calls)


def discord_limit(name: str) -> Limit:
    if name == "global":
        return GLOBAL_LIMIT
    return WEBHOOK_LIMIT if name.startswith("webhook:") else CHANNEL_LIMIT


def discord_share(name: str) -> Callable[[], float] | None:
    """The global budget belongs to the bot token, which every Discord worker spends: split."""
    return shares.of("discord") if name == "global" else None


class PersonaWebhooks:
    def __init__(self, name: str) -> None:
        self.name = name
        self.rates = RateWindows(discord_limit, discord_share)
        """The bot's rate windows, shared by all its debates (one webhook per channel serves them all)."""
        self._hooks: dict[int, discord.Webhook] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def get(self, channel: WebhookHost, owner_id: int) -> discord.Webhook:
        """The channel's persona webhook. Raises discord.Forbidden without Manage Webhooks."""
        cached = self._hooks.get(channel.id)
        if cached is not None:
            return cached
        lock = self._locks.setdefault(channel.id, asyncio.Lock())
        async with lock:
            cached = self._hooks.get(channel.id)
            if cached is not None:
                return cached
            await self.rates["global"].take()
            hook = next(
                (
                    h
                    for h in await channel.webhooks()
                    if h.name == self.name and h.token and h.user is not None and h.user.id == owner_id
                ),
                None,
            )
            if hook is None:
                await self.rates["global"].take()
                hook = await channel.create_webhook(name=self.name, reason="Rostra: personas speak here")
                log.info("created webhook %s in channel %s", hook.id, channel.id)
            self._hooks[channel.id] = hook
            return hook

    def forget(self, channel_id: int, webhook_id: int) -> None:
        """Drop a webhook that Discord no longer knows (deleted); the next `get` recreates it."""
        cached = self._hooks.get(channel_id)
        if cached is not None and cached.id == webhook_id:
            del self._hooks[channel_id]
