"""Each Discord interaction acted on once by the whole bot, whichever worker receives it.

Several workers may hold a gateway session that sees the same interaction (during a takeover, a
resumed session replaying its events, or two processes given the same shard). The first worker to
claim the interaction's id in the store answers it; the others leave it alone. The id is remembered
for `INTERACTION_TTL` seconds, far longer than the 15 minutes an interaction's token lives.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from adapters import once
from core.ports import Store

INTERACTION_TTL = 1800.0


async def first_delivery(store: Store, interaction: discord.Interaction[Any]) -> bool:
    """True when no worker has taken this interaction yet (adapters/once.py)."""
    if interaction.type is discord.InteractionType.autocomplete:
        return True  # suggestions change nothing: answered by whoever sees them
    return await once.first_delivery(store, f"discord:interaction:{interaction.id}", INTERACTION_TTL)


class OnceTree(app_commands.CommandTree[Any]):
    """The bot's command tree: a slash command another worker took already is dropped quietly."""

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        rt = getattr(self.client, "rt", None)
        return rt is None or await first_delivery(rt.store, interaction)
