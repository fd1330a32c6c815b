"""Answering an interaction privately, and in time: Discord refuses a first answer after 3 seconds,
so work that may wait on the store (the database away) is deferred ("thinking…") past a moment and
its answer follows up. A deferred answer may come for 15 minutes: one Discord does not take (a 5xx
after discord.py's own five tries, no answer) is tried again until it does
(`until_discord_answers`, which every follow-up `tell` sends goes through), so the person who asked
is told once Discord is back instead of watching "thinking…" until it expires, or being told Discord
stopped answering after what they asked for was done."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import discord

from adapters.delivery.outage import OutageLimits
from adapters.discord.delivery.sender import CONNECTION_ERRORS, NO_MENTIONS

log = logging.getLogger(__name__)

T = TypeVar("T")
DEFER_AFTER = 1.5  # seconds of work before the interaction is deferred
NOT_ANSWERING = (discord.DiscordServerError, *CONNECTION_ERRORS)
"""Discord did not answer (or answered 5xx) after discord.py's own tries: it may answer again soon."""
ANSWER_WAIT = OutageLimits(limit=120.0, first_probe=2.0, longest_probe=15.0)
"""How long a deferred answer waits for Discord: the person is still there after a minute or two."""


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
    """The first answer, or the follow-up of a deferred one, which waits Discord out
    (`until_discord_answers`: a try Discord answered 5xx may have landed, so at worst it shows twice)."""
    extra: dict[str, Any] = {} if view is None else {"view": view}
    if interaction.response.is_done():
        await until_discord_answers(
            lambda: interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS, **extra),
            what="an answer",
        )
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS, **extra)


async def until_discord_answers(
    first: Callable[[], Awaitable[T]], again: Callable[[], Awaitable[T]] | None = None, *, what: str
) -> T:
    """`first()`, then, while Discord does not answer, `again()` (default: `first`) with backoff for up
    to `ANSWER_WAIT.limit` seconds; the last failure is raised. The failed try may have landed, so
    `again` should be safe to repeat (an edit of the deferred answer rather than a second message)."""
    limits = ANSWER_WAIT
    give_up = time.monotonic() + limits.limit
    probe, call = limits.first_probe, first
    while True:
        try:
            return await call()
        except NOT_ANSWERING as exc:
            if time.monotonic() + probe > give_up:
                raise
            log.warning("Discord did not take %s (%r); trying again in %.0f s", what, exc, probe)
        await asyncio.sleep(probe)
        probe, call = min(probe * 2, limits.longest_probe), again or first
