"""When a Discord debate ends, its result reaches the channel it was started from (a short message
linking the thread), and the start card says it (its Stop and Status buttons give way)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import discord

from adapters.discord.controls import controls_view, transcript_view
from adapters.discord.delivery.sender import NO_MENTIONS
from adapters.discord.render.results import card_result, result_message
from adapters.host import Host
from adapters.results import Announcements, result_of

log = logging.getLogger(__name__)


async def public_card(
    channel: discord.TextChannel | discord.Thread, text: str, debate_id: str
) -> discord.Message | None:
    """The start card for the channel to see, with its buttons (when the reply to /debate was private)."""
    try:
        return await channel.send(text, view=controls_view(debate_id), allowed_mentions=NO_MENTIONS)
    except discord.HTTPException as exc:
        log.warning("debate %s: could not post its start card: %s", debate_id, exc)
        return None


START_CARD_KEY = "discord.start_card"
"""Binding key: `<channel id>:<message id>` of the start card (its result is added after a restart too)."""


@dataclass(frozen=True)
class _Card:
    channel: discord.abc.Messageable
    origin_id: int
    thread_id: int
    message: discord.Message | discord.PartialMessage | None


class DiscordResults:
    """`follow` once the start card is posted, `ended` when the debate's sink has its end (in either
    order): then the result is posted. Nothing here waits on the debate itself."""

    def __init__(self, rt: Host) -> None:
        self._rt = rt
        self._cards: dict[str, _Card] = {}
        self._ended: set[str] = set()
        self._posts = Announcements()

    def follow(
        self,
        debate_id: str,
        *,
        channel: discord.TextChannel | discord.Thread | discord.PartialMessageable,
        thread_id: int,
        card: discord.Message | discord.PartialMessage | None,
    ) -> None:
        self._cards[debate_id] = _Card(channel, channel.id, thread_id, card)
        if debate_id in self._ended:
            self._announce_now(debate_id)

    def ended(self, debate_id: str) -> None:
        if debate_id in self._cards:
            self._announce_now(debate_id)
        else:
            self._ended.add(debate_id)

    def _announce_now(self, debate_id: str) -> None:
        self._ended.discard(debate_id)
        card = self._cards.pop(debate_id)
        self._posts.start(self._announce(debate_id, card), name=f"discord-result-{debate_id}")

    async def _announce(self, debate_id: str, card: _Card) -> None:
        try:
            result = result_of(await self._rt.store.events(debate_id))
            if result is None:
                return
            if card.origin_id != card.thread_id:  # started from a channel: tell it
                await card.channel.send(result_message(result, card.thread_id), allowed_mentions=NO_MENTIONS)
            message = card.message
            if isinstance(message, discord.PartialMessage):  # after a restart: read it first
                message = await message.fetch()
            if message is not None and not message.flags.ephemeral:
                await message.edit(
                    content=f"{message.content}\n{card_result(result)}",
                    view=transcript_view(debate_id),
                    allowed_mentions=NO_MENTIONS,
                )
        except discord.HTTPException as exc:
            log.warning("debate %s: could not post its result: %s", debate_id, exc)
        except Exception:
            log.exception("debate %s: posting its result failed", debate_id)

    async def aclose(self) -> None:
        await self._posts.aclose()
