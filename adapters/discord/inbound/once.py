"""Each Discord interaction acted on once by the whole bot, whichever worker receives it.

Several workers may hold a gateway session that sees the same interaction (during a takeover, a
resumed session replaying its events, or two processes given the same shard). The first worker to
claim the interaction's id in the store answers it; the others leave it alone. The id is remembered
for `INTERACTION_TTL` seconds, far longer than the 15 minutes an interaction's token lives. A store
slow to say (the database away) is not waited for past `CHECK_WITHIN`: the interaction is answered,
as when the store cannot say at all, so that Discord's 3 seconds are not spent here.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from adapters import once
from core.ports import Store

INTERACTION_TTL = 1800.0
CHECK_WITHIN = 1.0  # seconds the store may take to say: Discord wants an answer within 3


async def first_delivery(store: Store, interaction: discord.Interaction[Any]) -> bool:
    """True when no worker has taken this interaction yet (adapters/once.py)."""
    if interaction.type is discord.InteractionType.autocomplete:
        return True  # suggestions change nothing: answered by whoever sees them
    key = f"discord:interaction:{interaction.id}"
    return await once.first_delivery(store, key, INTERACTION_TTL, within=CHECK_WITHIN)


class OnceTree(app_commands.CommandTree[Any]):
    """The bot's command tree: a slash command another worker took already is dropped quietly."""

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        rt = getattr(self.client, "rt", None)
        return rt is None or await first_delivery(rt.store, interaction)
