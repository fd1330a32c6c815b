"""Carries out ops in one debate's thread through the Web API (the thin, effectful layer).

It maps message keys to Slack timestamps, posts persona messages under the persona's name and
icon (`chat:write.customize`) and, when Slack refuses that, falls back to a bold name prefix and
says so once in the thread. What it sends is remembered with the debate (`remember`): each message's
timestamp (`ts:<key>`), each file sent (`file:<name>`), so that after a restart (`restore`) it edits
the same messages and never posts or uploads anything twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chunking import split_message
from adapters.delivery.rates import FencedWindows
from adapters.slack.delivery.failures import NETWORK_ERRORS, ReadBackDeferred, ambiguous, api_error
from adapters.slack.delivery.files import upload_once
from adapters.slack.delivery.markers import key_of, marked
from adapters.slack.delivery.rates import READ_BACK_MESSAGES, post_rate, rates_of
from adapters.slack.render.blocks import context
from adapters.slack.render.emoji import icon_emoji
from adapters.slack.render.ops import OPENING, Delete, Op, Post, Update, Upload
from adapters.slack.render.text import escape, model_text
from core.models import PersonaRef

log = logging.getLogger(__name__)

NOTE_KEY = "note:custom-names"
NO_CUSTOM_NAMES_NOTE = (
    "ℹ️ Persona names are shown in bold: Slack refused custom names and icons for Rostra's messages"
    " here (the app needs the `chat:write.customize` scope)."
)


@dataclass
class PersonaIdentity:
    """Whether a workspace lets Rostra post under persona names (shared by its debates)."""

    allowed: bool = True


def refused_customisation(exc: SlackApiError) -> bool:
    """Slack's answer when a post with `username`/`icon_*` is not allowed for this app."""
    error = exc.response.get("error")
    needed = str(exc.response.get("needed") or "")
    return error == "missing_scope" and (not needed or "chat:write.customize" in needed)


def persona_prefix(persona: PersonaRef) -> str:
    return f"*{persona.emoji} {escape(persona.name)}*\n"


# Sent with every message: nothing is parsed into a mention, nothing unfurls into a preview.
_SAFE: dict[str, Any] = {"parse": "none", "link_names": False}
_NO_UNFURL: dict[str, Any] = {"unfurl_links": False, "unfurl_media": False}


class SlackSender:
    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        identity: PersonaIdentity,
        limit: int,
        remember: Callable[[str, str], Awaitable[None]],
        fence: Callable[[], Awaitable[bool]],
    ) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.identity = identity
        self.limit = limit
        self.ts_of: dict[str, str] = {OPENING: thread_ts}
        self._remember = remember
        self._prefix: dict[str, str] = {}
        self._sent: dict[str, tuple[str, tuple[Any, ...]]] = {}
        self._reactions: dict[str, tuple[str, ...]] = {}  # a message's ballot, until it is posted
        self.seeded: dict[str, set[str]] = {}  # a message's ballot reactions Slack has taken
        self._newest = thread_ts  # the newest message posted here (where a lost post is looked for)
        self._rates = FencedWindows(rates_of(client), fence)  # each call asks after its wait for room
        self._files: set[str] = set()
        self._unsure: set[str] = set()  # keys (file names) whose post (upload) may have landed, answer lost
        self._look_back = False  # after a restart: read the thread once for posts that landed unremembered
        self._landed_before: dict[str, str] = {}  # what that read found: key → ts
        self._told_no_custom_names = False

    # --- after a restart ------------------------------------------------------------------------

    def restore(self, values: Mapping[str, str]) -> None:
        """Take back what was sent before a restart, from the debate's stored binding values."""
        for key, value in values.items():
            if key.startswith("ts:") and value:
                self.ts_of[key.removeprefix("ts:")] = value
            elif key.startswith("file:"):
                self._files.add(key.removeprefix("file:"))
        self.ts_of[OPENING] = self.thread_ts
        self._newest = max(self.ts_of.values(), key=float)
        self._look_back = True  # a post in flight when the last owner died may have landed unremembered
        if NOTE_KEY in self.ts_of:  # Slack refused persona names here, and the thread was told
            self.identity.allowed = False
            self._told_no_custom_names = True

    def assume(self, op: Op) -> None:
        """What `op` left in the thread before a restart (nothing is sent): message prefixes and
        deleted messages. Edits are not assumed to have landed, so the next one is always sent."""
        match op:
            case Post():
                if op.key in self.ts_of and op.persona is not None and not self.identity.allowed:
                    self._prefix[op.key] = persona_prefix(op.persona)
            case Delete():
                self.ts_of.pop(op.key, None)
            case Update() | Upload():
                pass

    async def apply(self, op: Op) -> None:
        match op:
            case Post():
                await self._post(op)
            case Update():
                await self._update(op)
            case Delete():
                await self._delete(op)
            case Upload():
                await self._upload(op)

    # --- posting --------------------------------------------------------------------------------

    async def _send(self, text: str, blocks: tuple[Any, ...], *, key: str | None = None, **extra: Any) -> str:
        """Post a message; with `key`, one that is never posted twice: when Slack's answer is lost
        (a dropped connection, a 5xx) the thread is read back for it before posting again. A
        read-back waits for the workspace's conversations.replies budget without holding up other
        debates: with none left now, `ReadBackDeferred` says to try again later (nothing posted)."""
        if key is not None and self._look_back:  # the first post after a restart: look first
            self._landed_before = await self._read_back() or {}
            self._look_back = False
        if key is not None and key in self._landed_before:
            log.info("posting %s: it had landed before the restart; keeping it", key)
            return self._posted(self._landed_before.pop(key))
        if key is not None and key in self._unsure:  # an earlier answer was lost: look first
            landed = await self._landed(key)
            if landed is not None:
                return self._posted(landed)
        for attempt in (1, 2):
            await self._rates[post_rate(self.channel)].take()
            try:
                response = await self.client.chat_postMessage(
                    channel=self.channel,
                    thread_ts=self.thread_ts,
                    text=text,
                    blocks=list(blocks) if blocks else None,
                    metadata=marked(key) if key else None,
                    **_SAFE,
                    **_NO_UNFURL,
                    **extra,
                )
                return self._posted(str(response["ts"]))
            except (SlackApiError, *NETWORK_ERRORS) as exc:
                if key is None or not ambiguous(exc):
                    raise
                self._unsure.add(key)
                if attempt == 2:
                    raise
                log.warning("posting %s: Slack's answer was lost (%r); looking for it", key, exc)
            landed = await self._landed(key)
            if landed is not None:
                log.info("posting %s: it had landed (%s); keeping it", key, landed)
                return self._posted(landed)
        raise AssertionError("unreachable")

    def _posted(self, ts: str) -> str:
        if float(ts) > float(self._newest):
            self._newest = ts
        return ts

    async def _landed(self, key: str) -> str | None:
        """The ts of the message posted with `key` after the newest one known, if Slack has it."""
        found = await self._read_back()
        self._unsure.discard(key)
        return None if found is None else found.get(key)

    async def _read_back(self) -> dict[str, str] | None:
        """The keys of Rostra's messages posted after the newest one known, with their ts (the
        newest 15 messages at most, Slack's limit for distributed apps); None when the thread
        cannot be read now."""
        if not self._rates["conversations.replies"].try_take(spare=0.0):
            raise ReadBackDeferred("no conversations.replies budget left now to read the thread back")
        try:
            response = await self.client.conversations_replies(
                channel=self.channel,
                ts=self.thread_ts,
                oldest=self._newest,
                include_all_metadata=True,
                limit=READ_BACK_MESSAGES,
            )
        except (SlackApiError, *NETWORK_ERRORS) as exc:
            log.warning("could not read the thread back (%r); posting again", exc)
            return None
        found: dict[str, str] = {}
        for message in response.get("messages") or []:
            key = key_of(message)
            if key is not None and message["ts"] != self.thread_ts:
                found[key] = str(message["ts"])
        return found

    async def notice(self, kind: str, text: str) -> None:
        """One message per kind of failure, posted once and then edited in place."""
        key = f"note:failed:{kind}"
        ts = self.ts_of.get(key)
        blocks = (context(text),)
        if ts is None:
            ts = await self._send(text, blocks, key=key)
            self.ts_of[key] = ts
            await self._remember(f"ts:{key}", ts)
        else:
            await self._rates["chat.update"].take()
            await self.client.chat_update(
                channel=self.channel, ts=ts, text=text, blocks=list(blocks), **_SAFE
            )

    async def _post(self, op: Post) -> None:
        if op.key in self.ts_of:  # posted before a restart: bring it up to date instead
            if op.key not in self._sent and await self._shows(self.ts_of[op.key], op):
                self._sent[op.key] = (op.text, op.blocks)  # an edit would cost the persona's name
            await self._update(Update(op.key, op.text, op.blocks))
            await self.seed(op.key, op.reactions)
            return
        prefix = ""
        ts: str | None = None
        self._reactions[op.key] = op.reactions  # a vote card whose post fails keeps its ballot
        if op.persona is not None and self.identity.allowed:
            try:
                ts = await self._send(op.text, op.blocks, key=op.key, **_identity(op.persona))
            except SlackApiError as exc:
                if not refused_customisation(exc):
                    raise
                log.warning("Slack refused persona names (%s); falling back to bold names", api_error(exc))
                self.identity.allowed = False
        if ts is None:
            if op.persona is not None:
                await self._tell_no_custom_names()
                prefix = persona_prefix(op.persona)
            ts = await self._send(prefix + op.text, op.blocks, key=op.key)
        self.ts_of[op.key] = ts
        self._prefix[op.key] = prefix
        self._sent[op.key] = (op.text, op.blocks)
        await self._remember(f"ts:{op.key}", ts)
        await self.seed(op.key, op.reactions)

    async def _shows(self, ts: str, op: Post) -> bool:
        """Whether the thread's message `ts` already shows `op` (read back once, after a restart)."""
        await self._rates["conversations.replies"].take()
        try:
            response = await self.client.conversations_replies(
                channel=self.channel, ts=self.thread_ts, oldest=ts, inclusive=True, limit=2
            )
        except (SlackApiError, SlackClientError) as exc:
            log.debug("could not read message %s back: %r", ts, exc)
            return False
        messages: list[dict[str, Any]] = list(response.get("messages") or [])
        found = next((m for m in messages if m.get("ts") == ts), None)
        return found is not None and found.get("text") == self._prefix.get(op.key, "") + op.text

    async def _tell_no_custom_names(self) -> None:
        if self._told_no_custom_names:
            return
        self._told_no_custom_names = True
        ts = await self._send(NO_CUSTOM_NAMES_NOTE, (context(NO_CUSTOM_NAMES_NOTE),), key=NOTE_KEY)
        self.ts_of[NOTE_KEY] = ts
        await self._remember(f"ts:{NOTE_KEY}", ts)

    async def seed(self, key: str, names: tuple[str, ...]) -> None:
        """Put a card's ballot (its reactions) on it. A reaction Slack refuses is left out, not
        raised: whether the ballot shows (`seeded`) decides whether people's window can run."""
        ts = self.ts_of.get(key)
        seeded = self.seeded.setdefault(key, set())
        for name in names:
            if ts is None or name in seeded:
                continue
            try:
                await self.react(ts, name)
            except (SlackApiError, *NETWORK_ERRORS) as exc:
                log.warning("Slack refused the ballot reaction %s on %s: %r", name, key, exc)
                continue
            seeded.add(name)

    def shows(self, key: str, text: str, blocks: tuple[Any, ...]) -> bool:
        """Whether message `key` was last shown as `text` and `blocks`."""
        return key in self.ts_of and self._sent.get(key) == (text, blocks)

    async def react(self, ts: str, name: str) -> None:
        await self._rates["reactions.add"].take()
        try:
            await self.client.reactions_add(channel=self.channel, timestamp=ts, name=name)
        except SlackApiError as exc:
            if api_error(exc) != "already_reacted":
                raise

    # --- editing --------------------------------------------------------------------------------

    async def _update(self, op: Update) -> None:
        ts = self.ts_of.get(op.key)
        if ts is None and not op.interim and op.key != OPENING:  # its post failed: post it now
            reactions = self._reactions.get(op.key, ())
            await self._post(Post(op.key, op.text, op.blocks, persona=op.persona, reactions=reactions))
            return
        if ts is None:
            log.debug("no message for %s; update skipped", op.key)
            return
        if self._sent.get(op.key) == (op.text, op.blocks):
            return
        if not op.interim:  # an interim edit took its share of the rate window when it was let through
            await self._rates["chat.update"].take()
        await self.client.chat_update(
            channel=self.channel,
            ts=ts,
            text=self._prefix.get(op.key, "") + op.text,
            blocks=list(op.blocks) if op.blocks else None,
            **_SAFE,
        )
        self._sent[op.key] = (op.text, op.blocks)

    async def _delete(self, op: Delete) -> None:
        ts = self.ts_of.pop(op.key, None)
        self._sent.pop(op.key, None)
        if ts is None:
            return
        await self._remember(f"ts:{op.key}", "")
        await self._rates["chat.delete"].take()
        try:
            await self.client.chat_delete(channel=self.channel, ts=ts)
        except SlackApiError as exc:
            if api_error(exc) != "message_not_found":  # already gone (deleted before a restart)
                raise

    # --- files ----------------------------------------------------------------------------------

    async def _upload(self, op: Upload) -> None:
        """A file once (Slack failing is raised, for the outage to wait out: files.py); a file
        Slack refuses goes without (a picture) or is posted as text."""
        if op.filename in self._files:  # sent before a restart
            return
        reason = await upload_once(self.client, self.channel, self.thread_ts, op, self._unsure)
        if reason is None:
            await self._sent_file(op.filename)
            return
        if isinstance(op.content, bytes):  # a picture: the closing card has said it all in words
            log.warning("could not upload %s (%s); the thread goes without it", op.filename, reason)
            return
        log.warning("could not upload %s (%s); posting it as text", op.filename, reason)
        lead = f"📎 *{escape(op.filename)}* (it could not be attached as a file: {escape(reason)})"
        await self._send(lead, (context(lead),))
        for index, part in enumerate(split_message(model_text(op.content.strip()), self.limit)):
            await self._post(Post(f"file:{op.filename}:{index}", part))
        await self._sent_file(op.filename)

    async def _sent_file(self, filename: str) -> None:
        self._files.add(filename)
        await self._remember(f"file:{filename}", "sent")


def _identity(persona: PersonaRef) -> dict[str, Any]:
    identity: dict[str, Any] = {"username": persona.name}
    if persona.avatar_url:
        identity["icon_url"] = persona.avatar_url
    elif (emoji := icon_emoji(persona.emoji)) is not None:
        identity["icon_emoji"] = emoji
    return identity
