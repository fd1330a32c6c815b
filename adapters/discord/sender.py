"""The thin layer that talks to Discord for one debate thread.

Persona posts go through the parent channel's webhook (`username`, `avatar_url`, `thread=`); without
Manage Webhooks they become the bot's own messages with the persona as embed author, after one
notice saying which permission turns personas on. Every call carries `AllowedMentions.none()` and
is retried a few times when Discord answers 5xx or 429.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import discord

from adapters.discord import messages
from adapters.discord.cards import as_bot_post
from adapters.discord.outgoing import Card, Post
from adapters.discord.settings import DiscordSettings
from adapters.discord.webhooks import PersonaWebhooks

log = logging.getLogger(__name__)

T = TypeVar("T")

NO_MENTIONS = discord.AllowedMentions.none()
UNKNOWN_WEBHOOK = 10015
USERNAME_LIMIT = 80
WEBHOOK_KEY = "discord.webhook_id"
MODE_KEY = "discord.persona_mode"


@dataclass(frozen=True)
class Sent:
    """A message the bot posted: its id, and the webhook it went through (None: the bot's own)."""

    id: int
    webhook_id: int | None = None

    @classmethod
    def of(cls, message: discord.Message) -> Sent:
        return cls(message.id, message.webhook_id)

    def encode(self) -> str:
        """As stored in a binding value: `id`, or `id@webhook` for a persona's message."""
        return f"{self.id}@{self.webhook_id}" if self.webhook_id is not None else str(self.id)

    @classmethod
    def decode(cls, text: str) -> Sent | None:
        head, _, hook = text.strip().partition("@")
        if not head.isdigit() or (hook and not hook.isdigit()):
            return None
        return cls(int(head), int(hook) if hook else None)


def embed_of(card: Card) -> discord.Embed:
    embed = discord.Embed(title=card.title or None, description=card.description or None, color=card.color)
    if card.author is not None:
        embed.set_author(name=card.author.name, icon_url=card.author.icon_url)
    for f in card.fields:
        embed.add_field(name=f.name, value=f.value, inline=f.inline)
    if card.footer:
        embed.set_footer(text=card.footer)
    return embed


def _transient(exc: discord.HTTPException) -> bool:
    return exc.status >= 500 or exc.status == 429


class Sender:
    def __init__(
        self,
        *,
        thread: discord.Thread,
        webhooks: PersonaWebhooks,
        owner_id: int,
        settings: DiscordSettings,
        remember: Callable[[str, str], Awaitable[None]],
    ) -> None:
        self._thread = thread
        self._webhooks = webhooks
        self._owner_id = owner_id
        self._settings = settings
        self._remember = remember
        self._webhook_id: int | None = None
        self._fallback = False

    @property
    def thread_id(self) -> int:
        return self._thread.id

    # --- the four things a debate needs --------------------------------------------------------

    async def send(self, post: Post) -> Sent:
        for _ in range(2):  # a deleted webhook is recreated once
            hook = await self._webhook() if post.persona is not None and not self._fallback else None
            if hook is None:
                break
            try:
                return Sent.of(await self._retrying(partial(self._hook_send, hook, post)))
            except discord.NotFound as exc:
                if exc.code != UNKNOWN_WEBHOOK:
                    raise
                self._lost(hook)
        return Sent.of(await self._retrying(lambda: self._bot_send(post)))

    async def edit(self, sent: Sent, post: Post) -> Sent:
        """The message showing `post` now (a new one when the old one can no longer be edited)."""
        if sent.webhook_id is None:
            return Sent.of(await self._retrying(lambda: self._bot_edit(sent.id, post)))
        hook = await self._webhook() if not self._fallback else None
        if hook is None or hook.id != sent.webhook_id:
            return await self.send(post)
        try:
            return Sent.of(await self._retrying(lambda: self._hook_edit(hook, sent.id, post)))
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_WEBHOOK:
                raise
            self._lost(hook)
            return await self.send(post)

    async def delete(self, sent: Sent) -> None:
        with contextlib.suppress(discord.NotFound):
            if sent.webhook_id is None:
                await self._retrying(self._thread.get_partial_message(sent.id).delete)
                return
            hook = await self._webhook() if not self._fallback else None
            if hook is not None and hook.id == sent.webhook_id:
                await self._retrying(lambda: hook.delete_message(sent.id, thread=self._thread))

    async def react(self, sent: Sent, emoji: str) -> None:
        await self._retrying(lambda: self._thread.get_partial_message(sent.id).add_reaction(emoji))

    def resume(self, values: Mapping[str, str]) -> None:
        """Carry on where a previous run left off (its binding values): the same webhook, or the
        fallback to bot messages without saying so again."""
        webhook_id = values.get(WEBHOOK_KEY, "")
        self._webhook_id = int(webhook_id) if webhook_id.isdigit() else None
        self._fallback = values.get(MODE_KEY) == "embeds"

    # --- webhook or bot ------------------------------------------------------------------------

    async def _webhook(self) -> discord.Webhook | None:
        parent = self._thread.parent
        if not isinstance(parent, discord.TextChannel | discord.ForumChannel):
            await self._fall_back(self._thread.parent_id)
            return None
        try:
            hook = await self._retrying(lambda: self._webhooks.get(parent, self._owner_id))
        except discord.Forbidden:
            await self._fall_back(parent.id)
            return None
        if hook.id != self._webhook_id:
            self._webhook_id = hook.id
            await self._remember(WEBHOOK_KEY, str(hook.id))
            await self._remember(MODE_KEY, "webhook")
        return hook

    async def _fall_back(self, channel_id: int) -> None:
        self._fallback = True
        log.warning("thread %s: no webhook, personas post as the bot", self._thread.id)
        await self._remember(MODE_KEY, "embeds")
        await self._retrying(lambda: self._bot_send(Post(content=messages.no_webhooks(channel_id))))

    def _lost(self, hook: discord.Webhook) -> None:
        log.warning("webhook %s was deleted; making a new one", hook.id)
        self._webhooks.forget(self._thread.parent_id, hook.id)
        self._webhook_id = None

    async def _hook_send(self, hook: discord.Webhook, post: Post) -> discord.Message:
        assert post.persona is not None
        persona = post.persona
        return await hook.send(
            content=post.content or discord.utils.MISSING,
            username=persona.name[:USERNAME_LIMIT],
            avatar_url=persona.avatar_url or discord.utils.MISSING,
            embeds=[embed_of(c) for c in post.cards],
            thread=self._thread,
            files=self._files(post),
            allowed_mentions=NO_MENTIONS,
            wait=True,
        )

    async def _hook_edit(self, hook: discord.Webhook, message_id: int, post: Post) -> discord.Message:
        return await hook.edit_message(
            message_id,
            content=post.content or None,
            embeds=[embed_of(c) for c in post.cards],
            thread=self._thread,
            allowed_mentions=NO_MENTIONS,
        )

    async def _bot_send(self, post: Post) -> discord.Message:
        post = as_bot_post(post)
        return await self._thread.send(
            content=post.content or None,
            embeds=[embed_of(c) for c in post.cards],
            files=self._files(post),
            allowed_mentions=NO_MENTIONS,
        )

    async def _bot_edit(self, message_id: int, post: Post) -> discord.Message:
        post = as_bot_post(post)
        return await self._thread.get_partial_message(message_id).edit(
            content=post.content or None,
            embeds=[embed_of(c) for c in post.cards],
            allowed_mentions=NO_MENTIONS,
        )

    @staticmethod
    def _files(post: Post) -> list[discord.File]:
        if post.attachment is None:
            return []
        data = io.BytesIO(post.attachment.content.encode("utf-8"))
        return [discord.File(data, filename=post.attachment.filename)]

    # --- retries -------------------------------------------------------------------------------

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        retries = self._settings.send_retries
        for attempt in range(retries + 1):
            try:
                return await call()
            except discord.HTTPException as exc:
                if not _transient(exc) or attempt == retries:
                    raise
                delay = self._settings.retry_delay * 2**attempt
                log.warning("Discord answered %s; retrying in %.1f s", exc.status, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")
