"""Opening a debate's thread so that Discord failing for a while neither refuses the start nor leaves
threads behind.

A start opens its thread first: that is where the debate lives. discord.py tries a request Discord
answers 5xx five times (about 25 s) and then raises; Discord may have made the thread all the same
(its answer lost), once for each of those tries. So, as Slack's opening card does
(`adapters/slack/delivery/opening.py`), the start waits Discord out with backoff (`OPENING_WAIT`)
and, before each new try, reads the server's active threads back for the ones it made: the first
carries the debate, any others are closed (`close_unused`), and a new thread is asked for only once
a read-back shows none landed. A thread discord.py got only after trying again (the call took a
second or more) is checked the same way for the threads its earlier tries made. What marks a
thread as this start's: opened by the bot, in this channel, under this name, since the start
began, with nothing in it yet (a debate in the channel holds its admission claim meanwhile, so no
other start opens one there).
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, cast

import discord

from adapters.delivery.outage import OutageLimits
from adapters.discord.delivery.sender import CONNECTION_ERRORS, NO_MENTIONS

if TYPE_CHECKING:
    from discord.types.threads import ThreadArchiveDuration

log = logging.getLogger(__name__)

OPENING_WAIT = OutageLimits(limit=120.0, first_probe=2.0, longest_probe=15.0)
"""How long a start waits for Discord to open its thread: the person who asked is still there after a
minute or two of Discord failing."""
RETRIED_AFTER = 1.0  # seconds: discord.py waits at least this long before trying a 5xx request again
CLOCK_SKEW = timedelta(seconds=2)  # Discord's clock against ours, for "made since the start began"


async def open_thread(
    channel: discord.TextChannel,
    name: str,
    *,
    archive_minutes: int,
    reason: str,
    limits: OutageLimits | None = None,
) -> discord.Thread:
    """The public thread opened in `channel` for a start. Raises discord.HTTPException when Discord
    refused it, or the last failure when it was not opened within `limits.limit` seconds."""
    limits = limits or OPENING_WAIT
    since = discord.utils.utcnow() - CLOCK_SKEW
    give_up = time.monotonic() + limits.limit
    probe, create = limits.first_probe, True  # False while it is unknown whether the last try landed
    while True:
        if create:
            began = time.monotonic()
            try:
                made = await channel.create_thread(
                    name=name,
                    type=discord.ChannelType.public_thread,
                    auto_archive_duration=cast("ThreadArchiveDuration", archive_minutes),
                    reason=reason,
                )
            except (discord.HTTPException, *CONNECTION_ERRORS) as exc:
                if isinstance(exc, discord.HTTPException) and exc.status < 500:
                    raise  # refused: permissions, a rate limit past discord.py's waits, a bad name
                failure: Exception = exc
            else:
                if time.monotonic() - began >= RETRIED_AFTER:  # discord.py tried more than once
                    await _keep_one(channel, made, await _landed(channel, name, since) or [])
                return made
        landed = await _landed(channel, name, since)
        if landed:
            log.info(
                "the debate thread in %s had opened (%s), Discord's answer lost", channel.id, landed[0].id
            )
            return await _keep_one(channel, landed[0], landed)
        create = landed is not None  # None: could not look, so a new try could make a second thread
        if time.monotonic() + probe > give_up:
            raise failure
        log.warning("no thread opened in %s yet (%r); trying again in %.0f s", channel.id, failure, probe)
        await asyncio.sleep(probe)
        probe = min(probe * 2, limits.longest_probe)


async def _keep_one(
    channel: discord.TextChannel, kept: discord.Thread, made: list[discord.Thread]
) -> discord.Thread:
    """`kept` carries the debate; the other threads this start made are closed."""
    for extra in made:
        if extra.id != kept.id:
            log.warning("closing thread %s in %s: Discord opened it for the same start", extra.id, channel.id)
            await close_unused(extra, f"Discord opened this thread twice: the debate is in <#{kept.id}>.")
    return kept


async def _landed(channel: discord.TextChannel, name: str, since: datetime) -> list[discord.Thread] | None:
    """The empty threads the bot opened in `channel` under `name` since `since`, oldest first; None when
    Discord could not be asked."""
    me = channel.guild.me
    try:
        threads = await channel.guild.active_threads()
    except (discord.HTTPException, *CONNECTION_ERRORS) as exc:
        log.warning("could not look for a lost debate thread in %s: %r", channel.id, exc)
        return None
    return sorted(
        (
            t
            for t in threads
            if t.parent_id == channel.id
            and t.owner_id == me.id
            and t.name == name
            and discord.utils.snowflake_time(t.id) >= since
            and not t.message_count
        ),
        key=lambda t: t.id,
    )


async def close_unused(thread: discord.Thread, why: str) -> None:
    """A thread opened for a debate that did not start: deleted where Rostra may (Manage Threads),
    else it says why it is empty."""
    try:
        if thread.permissions_for(thread.guild.me).manage_threads:
            await thread.delete(reason="its debate did not start")
            return
    except discord.HTTPException as exc:
        log.warning("could not delete the unused thread %s: %s", thread.id, exc)
    try:
        await thread.send(f"🚫 {why}", allowed_mentions=NO_MENTIONS)
    except discord.HTTPException as exc:
        log.warning("could not say why thread %s is empty: %s", thread.id, exc)
