"""Who may start debates (members with a configured role or Manage Threads; anyone when no roles
are configured), who may stop one (its starter, Manage Threads, or a configured role: being allowed
to start is not being allowed to stop another person's debate), and who may read a stored debate
(whoever can see the channel it was held in)."""

from __future__ import annotations

from collections.abc import Sequence

import discord


def may_run_debates(
    user: discord.Member | discord.User, permissions: discord.Permissions, allowed: Sequence[str]
) -> bool:
    """`permissions`: the member's resolved permissions in the channel (`interaction.permissions`)."""
    return not allowed or permissions.manage_threads or _has_role(user, allowed)


def _has_role(user: discord.Member | discord.User, allowed: Sequence[str]) -> bool:
    if not isinstance(user, discord.Member):
        return False
    wanted = {a.strip().casefold() for a in allowed}
    return any(role.name.casefold() in wanted or str(role.id) in wanted for role in user.roles)


def may_stop(
    user: discord.Member | discord.User,
    permissions: discord.Permissions,
    allowed: Sequence[str],
    *,
    starter: str,
) -> bool:
    """The starter, a member with Manage Threads, or (when roles are configured) one of them."""
    if str(user.id) == starter or permissions.manage_threads:
        return True
    return bool(allowed) and _has_role(user, allowed)


def can_see(user: discord.Member | discord.User, channel: object) -> bool:
    """Whether `user` may view `channel` (a guild channel or thread); False when unknown."""
    if not isinstance(user, discord.Member) or not isinstance(
        channel, discord.abc.GuildChannel | discord.Thread
    ):
        return False
    return channel.permissions_for(user).view_channel
