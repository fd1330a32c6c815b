"""Answering an interaction privately, and in time: Discord refuses a first answer after 3 seconds,
so work that may wait on the store (the database away) is deferred ("thinking…") past a moment and
its answer follows up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import discord

from adapters.discord.delivery.sender import NO_MENTIONS

T = TypeVar("T")
DEFER_AFTER = 1.5  # seconds of work before the interaction is deferred


async def in_time(interaction: discord.Interaction[Any], work: Awaitable[T], private: bool = True) -> T:
    task = asyncio.ensure_future(work)
    try:
        slow = not (await asyncio.wait({task}, timeout=DEFER_AFTER))[0]
        if slow and not interaction.response.is_done():  # (a first answer may have gone: "it waits")
            await interaction.response.defer(ephemeral=private, thinking=True)
        return await task
    finally:
        task.cancel()  # the handler itself cancelled: its work too (a no-op once done)


async def tell(interaction: discord.Interaction[Any], text: str, view: discord.ui.View | None = None) -> None:
    """The first answer, or the follow-up of a deferred one."""
    extra: dict[str, Any] = {} if view is None else {"view": view}
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS, **extra)
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS, **extra)
