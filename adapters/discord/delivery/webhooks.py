"""Persona webhooks: a few per channel, each shared by up to `SEAT_SHARE` debates; cached, found
again after a restart (by name and owner), recreated when someone deleted one; and the names
personas may post under there.

A webhook takes 5 requests per 2 s, so one for every debate in a busy channel would keep 20 debates
speaking at once waiting seconds for their turns; a debate keeps its webhook for good (only the
webhook that posted a message can edit it), and a resumed debate asks for the same one again."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping

import discord

from adapters.delivery import shares
from adapters.delivery.rates import Limit, RateWindow, RateWindows
from core.errors import StoreError
from core.ports import Store

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
SEAT_SHARE = 4
"""Debates on one webhook before the channel gets another (four debates' turns fit its 5 per 2 s)."""
SEATS = 5
"""Persona webhooks the bot makes in one channel at most (Discord allows 15)."""


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


SEAT_KEY = "discord.webhook_seat"
"""Binding: which of its channel's persona webhooks a debate speaks through."""
HOST_KEY = "discord.webhook_channel"
"""Binding: the channel whose persona webhooks a debate speaks through (its thread's parent)."""


async def seats_taken(store: Store, thread: discord.Thread) -> Mapping[str, int]:
    """How many running debates speak through each webhook of the thread's channel, on every worker
    (an empty count when the store cannot say: the seat is then chosen from this worker's alone)."""
    channel_id = thread.parent_id or 0
    try:
        return await store.running_values(SEAT_KEY, (HOST_KEY, str(channel_id)))
    except StoreError as exc:
        log.warning("could not count the debates on the webhooks of %s: %s", channel_id, exc)
        return {}


class PersonaWebhooks:
    def __init__(self, name: str) -> None:
        self.name = name
        self.rates = RateWindows(discord_limit, discord_share)
        """The bot's rate windows, shared by all its debates (each webhook's by the debates on it)."""
        self._hooks: dict[tuple[int, int], discord.Webhook] = {}
        self._locks: dict[tuple[int, int], asyncio.Lock] = {}
        self._seated: dict[int, list[int]] = {}  # channel → how many debates use each of its webhooks

    def seat(
        self, channel_id: int, seat: int | None = None, *, taken: Mapping[str, int] | None = None
    ) -> int:
        """Which of the channel's webhooks one more debate uses: `seat` for a resumed debate (the
        webhook its messages came from), else the first with room, else the least used. `taken`:
        how many running debates each seat holds across every worker (`seats_taken`), so that
        several workers spread their debates over the channel's webhooks too."""
        seated = self._seated.setdefault(channel_id, [0] * SEATS)
        if seat is None or not 0 <= seat < SEATS:
            load = [max(n, (taken or {}).get(str(i), 0)) for i, n in enumerate(seated)]
            roomy = [i for i, n in enumerate(load) if n < SEAT_SHARE]
            seat = roomy[0] if roomy else min(range(SEATS), key=load.__getitem__)
        seated[seat] += 1
        return seat

    def leave(self, channel_id: int, seat: int) -> None:
        self._seated[channel_id][seat] -= 1

    def pacing(self, application_id: Callable[[], int | None]) -> Callable[[str], RateWindow | None]:
        """The rate window each request to Discord takes as it is sent: the bot's global one, except
        an interaction's answers (Discord does not count them; they must not wait behind turns)."""

        def window(path: str) -> RateWindow | None:
            app = application_id()
            if "/interactions/" in path or (app is not None and f"/webhooks/{app}/" in path):
                return None
            return self.rates["global"]

        return window

    def window(self, channel_id: int, seat: int) -> RateWindow:
        return self.rates[f"webhook:{channel_id}:{seat}"]

    async def get(self, channel: WebhookHost, owner_id: int, seat: int = 0) -> discord.Webhook:
        """The channel's persona webhook `seat`. Raises discord.Forbidden without Manage Webhooks;
        when Discord refuses another webhook in the channel (its limit), the first one serves."""
        key = (channel.id, seat)
        cached = self._hooks.get(key)
        if cached is not None:
            return cached
        async with self._locks.setdefault(key, asyncio.Lock()):
            cached = self._hooks.get(key)
            if cached is not None:
                return cached
            name = self.name if seat == 0 else f"{self.name} {seat + 1}"
            hook = next(
                (
                    h
                    for h in await channel.webhooks()
                    if h.name == name and h.token and h.user is not None and h.user.id == owner_id
                ),
                None,
            )
            if hook is None:
                try:
                    hook = await channel.create_webhook(name=name, reason="Rostra: personas speak here")
                except discord.HTTPException as e:
                    if seat == 0 or isinstance(e, discord.Forbidden):
                        raise
                    log.warning("channel %s: no webhook %r (%s); sharing the first", channel.id, name, e)
                    hook = await self.get(channel, owner_id)  # kept for this seat: not asked again
                else:
                    log.info("created webhook %s in channel %s", hook.id, channel.id)
            self._hooks[key] = hook
            return hook

    def forget(self, channel_id: int, webhook_id: int) -> None:
        """Drop a webhook that Discord no longer knows (deleted); the next `get` recreates it."""
        for key, hook in list(self._hooks.items()):
            if key[0] == channel_id and hook.id == webhook_id:
                del self._hooks[key]
