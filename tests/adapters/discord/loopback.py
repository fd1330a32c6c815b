"""The real discord.py client (its HTTP client, rate limiter and webhook adapter) against the strict
loopback REST fake (tests/fakes/discord_rest.py): a guild, a text channel and its debate threads."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import discord

from tests.fakes.discord_rest import BOT_ID, FakeDiscordREST, Limits


@dataclass
class Loopback:
    api: FakeDiscordREST
    client: discord.Client
    guild: discord.Guild
    channel: discord.TextChannel

    @property
    def owner_id(self) -> int:
        return BOT_ID

    def thread(self) -> discord.Thread:
        """A new public thread under the channel (known to the fake and to discord.py's cache)."""
        thread_id = self.api.add_channel(parent_id=self.channel.id)
        data: Any = {
            "id": str(thread_id),
            "name": "debate",
            "type": 11,
            "parent_id": str(self.channel.id),
            "owner_id": str(BOT_ID),
            "message_count": 0,
            "member_count": 1,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": discord.utils.utcnow().isoformat(),
                "locked": False,
            },
        }
        thread = discord.Thread(guild=self.guild, state=self.client._connection, data=data)
        self.guild._add_thread(thread)
        return thread

    def channel_named(self, name: str) -> discord.TextChannel:
        channel_id = self.api.add_channel()
        data: Any = {"id": str(channel_id), "name": name, "type": 0, "position": 0}
        channel = discord.TextChannel(state=self.client._connection, guild=self.guild, data=data)
        self.guild._add_channel(channel)
        return channel


@asynccontextmanager
async def loopback(limits: Limits | None = None) -> AsyncIterator[Loopback]:
    api = FakeDiscordREST(limits)
    await api.start()
    client = discord.Client(intents=discord.Intents.none())
    try:
        with api.pointed_at():
            await client.login("loopback-token")  # GET /users/@me through the real HTTP client
            guild_data: Any = {"id": "1", "name": "Agora"}
            guild = discord.Guild(data=guild_data, state=client._connection)
            channel_id = api.add_channel()
            channel_data: Any = {"id": str(channel_id), "name": "debates", "type": 0, "position": 0}
            channel = discord.TextChannel(state=client._connection, guild=guild, data=channel_data)
            guild._add_channel(channel)
            yield Loopback(api, client, guild, channel)
    finally:
        await client.close()
        await api.stop()
