"""The thin layer that talks to Discord for one debate thread.

Persona posts go through the parent channel's webhook (`username`, `avatar_url`, `thread=`); without
Manage Webhooks they become the bot's own messages with the persona as embed author, after one
notice saying which permission turns personas on. A persona whose name Discord refuses as a webhook
username (400, Invalid Form Body) speaks the same way, without losing the turn. Every call carries
`AllowedMentions.none()`.

There is one retry layer, discord.py's own: it waits out 429s (Retry-After, per bucket and global)
and retries 500/502/504 a few times; nothing here retries around it. A retried post may have landed
the first time (Discord stored it, the answer was lost), so posts are made idempotent: the bot's own
messages carry a `nonce` with `enforce_nonce` (Discord returns the first message instead of posting
again), and a webhook post that was retried or failed is reconciled by reading the thread's newest
messages back: the earliest copy is kept and any later copy deleted. Whether a post was retried
is told by the requests the call made (`adapters.delivery.attempts`), not by how long it took.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

import aiohttp
import discord

from adapters.delivery.attempts import counting
from adapters.discord.delivery.webhooks import PersonaWebhooks, webhook_username
from adapters.discord.render import messages
from adapters.discord.render.cards import as_bot_post
from adapters.discord.render.ops import Card, Post
from adapters.discord.settings import DiscordSettings

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
UNKNOWN_WEBHOOK = 10015
INVALID_FORM_BODY = 50035
WEBHOOK_KEY = "discord.webhook_id"
MODE_KEY = "discord.persona_mode"
LOST_ANSWER = (aiohttp.ClientError, OSError, TimeoutError)
"""A call that failed this way may have been carried out: its answer was lost (a timeout, a dropped
connection)."""
READ_BACK = 25
"""How many of the thread's newest messages are read back to reconcile a post."""


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
    if card.image_url:
        embed.set_image(url=card.image_url)
    return embed


def nonce_for(key: str) -> str:
    """A post's nonce (Discord allows 25 characters): the same post always gets the same one."""
    return hashlib.blake2s(key.encode(), digest_size=12).hexdigest()[:25]


def _same_post(message: discord.Message, hook_id: int, post: Post) -> bool:
    persona = post.persona
    return (
        message.webhook_id == hook_id
        and persona is not None
        and message.author.name == webhook_username(persona.name)
        and message.content == (post.content or "")
        and [e.title for e in message.embeds] == [c.title or None for c in post.cards]
    )


def _name_refused(exc: discord.HTTPException) -> bool:
    """Discord refused a webhook post's username (400, Invalid Form Body, the error under `username`)."""
    return exc.status == 400 and exc.code == INVALID_FORM_BODY and "username" in exc.text


class Sender:
    def __init__(
        self,
        *,
        thread: discord.Thread,
        webhooks: PersonaWebhooks,
        owner_id: int,
        settings: DiscordSettings,
        remember: Callable[[str, str], Awaitable[None]],
        seat: int = 0,
    ) -> None:
        self._thread = thread
        self._webhooks = webhooks
        self._seat = seat  # which of the channel's persona webhooks (`PersonaWebhooks.seat`)
        self._owner_id = owner_id
        self._settings = settings
        self._remember = remember
        self._webhook_id: int | None = None
        self._fallback = False
        self._refused_names: set[str] = set()
        """Personas whose name Discord refused as a webhook username: they post as the bot."""

    @property
    def thread_id(self) -> int:
        return self._thread.id

    # --- the four things a debate needs --------------------------------------------------------

    async def send(self, post: Post, *, key: str | None = None) -> Sent:
        """Post `post`; `key` names it for good (a bot message's nonce), so that a post Discord
        stored but answered with an error is not posted twice."""
        persona = post.persona
        for _ in range(2):  # a deleted webhook is recreated once
            webhook = persona is not None and not self._fallback and persona.name not in self._refused_names
            hook = await self._webhook() if webhook else None
            if hook is None:
                break
            try:
                return await self._hook_post(hook, post)
            except discord.NotFound as exc:
                if exc.code != UNKNOWN_WEBHOOK:
                    raise
                self._lost(hook)
            except discord.HTTPException as exc:
                if persona is None or not _name_refused(exc):
                    raise
                log.warning("thread %s: Discord refused the webhook name %r", self._thread.id, persona.name)
                self._refused_names.add(persona.name)
                break
        nonce = nonce_for(f"{self._thread.id}:{key}") if key is not None else None
        return Sent.of(await self._bot_send(post, nonce=nonce))

    async def _hook_post(self, hook: discord.Webhook, post: Post) -> Sent:
        """A webhook post, reconciled when discord.py had to retry it or gave up on it."""
        since = discord.utils.utcnow() - timedelta(seconds=2)
        with counting() as requests:
            try:
                message = await self._hook_send(hook, post)
            except (discord.HTTPException, *LOST_ANSWER) as exc:
                if isinstance(exc, discord.HTTPException) and exc.status < 500:
                    raise
                landed = await self._copies(hook.id, post, since)
                if not landed:
                    raise
                log.info("thread %s: a post that failed (%r) had landed; keeping it", self._thread.id, exc)
                return await self._keep_first(landed)
        if not requests.maybe_twice:  # sent once, or again after a 429 only: nothing to reconcile
            return Sent.of(message)
        copies = await self._copies(hook.id, post, since)
        return await self._keep_first(copies) if len(copies) > 1 else Sent.of(message)

    async def _copies(self, hook_id: int, post: Post, since: datetime) -> list[discord.Message]:
        """The thread's newest messages that are this post (oldest first); [] when unreadable."""
        try:
            recent = [m async for m in self._thread.history(limit=READ_BACK, after=since, oldest_first=True)]
        except discord.HTTPException as exc:
            log.warning("thread %s: could not read messages back (%s)", self._thread.id, exc.status)
            return []
        return [m for m in recent if _same_post(m, hook_id, post)]

    async def _keep_first(self, copies: list[discord.Message]) -> Sent:
        first, *extra = copies
        for copy in extra:
            log.warning("thread %s: deleting a duplicate of message %s", self._thread.id, first.id)
            with contextlib.suppress(discord.HTTPException):
                await self.delete(Sent.of(copy))
        return Sent.of(first)

    async def edit(self, sent: Sent, post: Post) -> Sent:
        """The message showing `post` now (a new one when the old one can no longer be edited)."""
        if sent.webhook_id is None:
            return Sent.of(await self._bot_edit(sent.id, post))
        hook = await self._webhook() if not self._fallback else None
        if hook is None or hook.id != sent.webhook_id:
            return await self._replace(sent, post)
        try:
            return Sent.of(await self._hook_edit(hook, sent.id, post))
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_WEBHOOK:
                raise
            self._lost(hook)
            return await self._replace(sent, post)

    async def _replace(self, sent: Sent, post: Post) -> Sent:
        """The webhook that posted `sent` is gone (deleted mid-turn): post `post` anew (through the
        recreated webhook, or as the bot) and take the old message away, so that no half-written
        message stays (without Manage Messages the old one stays, the full text right below it)."""
        replaced = await self.send(post)
        try:
            await self._thread.get_partial_message(sent.id).delete()
        except discord.NotFound:
            pass
        except discord.HTTPException as exc:
            log.warning(
                "thread %s: could not delete replaced message %s (%s)", self._thread.id, sent.id, exc.status
            )
        return replaced

    async def delete(self, sent: Sent) -> None:
        with contextlib.suppress(discord.NotFound):
            if sent.webhook_id is None:
                await self._thread.get_partial_message(sent.id).delete()
                return
            hook = await self._webhook() if not self._fallback else None
            if hook is not None and hook.id == sent.webhook_id:
                await hook.delete_message(sent.id, thread=self._thread)

    async def react(self, sent: Sent, emoji: str) -> None:
        await self._thread.get_partial_message(sent.id).add_reaction(emoji)

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
            hook = await self._webhooks.get(parent, self._owner_id, self._seat)
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
        await self._bot_send(Post(content=messages.no_webhooks(channel_id)))

    def _lost(self, hook: discord.Webhook) -> None:
        log.warning("webhook %s was deleted; making a new one", hook.id)
        self._webhooks.forget(self._thread.parent_id, hook.id)
        self._webhook_id = None

    async def _hook_send(self, hook: discord.Webhook, post: Post) -> discord.Message:
        assert post.persona is not None
        persona = post.persona
        return await hook.send(
            content=post.content or discord.utils.MISSING,
            username=webhook_username(persona.name),
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

    async def _bot_send(self, post: Post, *, nonce: str | None = None) -> discord.Message:
        post = as_bot_post(post)
        content, embeds, files = post.content or None, [embed_of(c) for c in post.cards], self._files(post)
        if nonce is None:
            return await self._thread.send(
                content=content, embeds=embeds, files=files, allowed_mentions=NO_MENTIONS
            )
        return await self._thread.send(  # discord.py adds enforce_nonce: a repeat returns the first
            content=content, embeds=embeds, files=files, allowed_mentions=NO_MENTIONS, nonce=nonce
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
        files: list[discord.File] = []
        if post.attachment is not None:
            data = io.BytesIO(post.attachment.content.encode("utf-8"))
            files.append(discord.File(data, filename=post.attachment.filename))
        if post.picture is not None:  # the results picture, shown in the card (its alt text as description)
            picture = post.picture
            description = picture.description or None
            files.append(discord.File(io.BytesIO(picture.data), picture.filename, description=description))
        return files


THREAD_GONE = {
    10003: "the debate thread was deleted",  # Unknown Channel
    50001: "Rostra can no longer see the debate thread",  # Missing Access
}
CONNECTION_ERRORS = (aiohttp.ClientError, OSError, TimeoutError)


def discord_down(exc: BaseException) -> bool:
    """Discord not taking calls now: a 5xx, a 429 that outlasted discord.py's retries, no answer."""
    if isinstance(exc, discord.HTTPException):
        return exc.status >= 500 or exc.status == 429
    return isinstance(exc, CONNECTION_ERRORS)
