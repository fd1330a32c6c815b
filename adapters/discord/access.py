"""Who may start and stop debates: members with a configured role or Manage Threads (anyone when
no roles are configured)."""

from __future__ import annotations

from collections.abc import Sequence

import discord


def may_run_debates(
    user: discord.Member | discord.User, permissions: discord.Permissions, allowed: Sequence[str]
) -> bool:
    """`permissions`: the member's resolved permissions in the channel (`interaction.permissions`)."""
    if not allowed or permissions.manage_threads:
        return True
    if not isinstance(user, discord.Member):
        return False
    wanted = {a.strip().casefold() for a in allowed}
    return any(role.name.casefold() in wanted or str(role.id) in wanted for role in user.roles)
