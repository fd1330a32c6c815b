"""Reactions on the cards of debates another Rostra process runs, from Discord.

A reaction reaches the process whose shard holds the server; after a failover the debate may run
elsewhere. The shared `RemoteReactions` passes reactions and clicks on; this finds Discord's
cards among a debate's recorded message ids and maps emoji to option keys.
"""

from __future__ import annotations

from collections.abc import Mapping

from adapters.discord.ballots.reactions import EmojiKeys
from adapters.discord.delivery.sender import Sent
from adapters.discord.delivery.slots import SLOT_KEY
from adapters.discord.render.events import vote_slot
from adapters.host import Host
from adapters.remote_votes import RemoteReactions
from adapters.stored_cards import StoredCard

PLATFORM = "discord"


def card_of(values: Mapping[str, str], message: str) -> str | None:
    """The vote whose card is `message`, from the recorded slots (`discord.slot.vote:<id>`)."""
    prefix = SLOT_KEY + vote_slot("")
    for key, value in values.items():
        if key.startswith(prefix) and value:
            first = Sent.decode(value.split(",", 1)[0])
            if first is not None and str(first.id) == message:
                return key.removeprefix(prefix)
    return None


def _key_of(card: StoredCard, emoji: str) -> str | None:
    return EmojiKeys(card.options).key_of(emoji)


class RemoteVotes(RemoteReactions):
    def __init__(self, rt: Host) -> None:
        super().__init__(rt, PLATFORM, card_of, _key_of)

    async def reacted(self, thread_id: int, message_id: int, person: str, name: str, emoji: str) -> None:
        await self.reaction(str(thread_id), str(message_id), person, emoji, added=True, name=name)

    async def unreacted(self, thread_id: int, message_id: int, person: str, emoji: str) -> None:
        await self.reaction(str(thread_id), str(message_id), person, emoji, added=False, name=None)
