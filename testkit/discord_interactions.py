"""Slash commands and button clicks on the loopback Discord REST fake (testkit/discord_rest.py), and
the bot's answers to them, as Discord's REST API takes them.

Discord delivers an interaction over the gateway (INTERACTION_CREATE); the payloads built here are
what a bot process feeds its own discord.py state in place of a gateway (`payload_for_slash`,
`payload_for_click`). The bot answers over REST, and those answers are routed here: the interaction
callback (a reply, a "thinking…" defer, an update), follow-ups and edits of the original reply
through the interaction's webhook, and the few channel routes a debate's start and resume need
(a new thread, a channel or a message read back, the command sync). What each person was told is
kept per interaction (`replies`), ephemeral or not; public replies also land in their channel.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord

if TYPE_CHECKING:
    from testkit.discord_rest import FakeDiscordREST, Request

EPHEMERAL = 64
GUILD_ID = 1
EVERYTHING = str(discord.Permissions.all().value)


@dataclass
class Reply:
    id: int
    content: str
    ephemeral: bool
    components: list[dict[str, Any]] = field(default_factory=list)
    loading: bool = False  # a "thinking…" defer not yet completed
    files: list[str] = field(default_factory=list)  # the attachments' file names

    def custom_ids(self) -> list[str]:
        return [
            c["custom_id"] for row in self.components for c in row.get("components", []) if "custom_id" in c
        ]


@dataclass
class Asked:
    """One interaction: where it was made, and what the bot answered."""

    id: int
    token: str
    channel_id: int
    type: int
    replies: list[Reply] = field(default_factory=list)
    deferred: Reply | None = None
    answered_at: float | None = None
    made_at: float = field(default_factory=time.monotonic)  # Discord wants a first answer within 3 s

    def answered_within(self) -> float | None:
        """Seconds from the interaction to its first answer (or "thinking…"), once answered."""
        return None if self.answered_at is None else self.answered_at - self.made_at


class Interactions:
    def __init__(self, fake: FakeDiscordREST) -> None:
        self.fake = fake
        self.asked: dict[int, Asked] = {}
        self._by_token: dict[str, Asked] = {}

    # --- what people do --------------------------------------------------------------------------

    def payload_for_slash(
        self, *, channel_id: int, user: dict[str, Any], sub: str, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """INTERACTION_CREATE for `/debate <sub> [options]` by `user` in `channel_id`."""
        given = [{"name": k, "type": _option_type(v), "value": v} for k, v in (options or {}).items()]
        data = {
            "id": str(BOT_COMMAND_ID),
            "name": "debate",
            "type": 1,
            "options": [{"name": sub, "type": 1, "options": given}],
        }
        return self._payload(2, channel_id, user, data)

    def payload_for_click(
        self, *, user: dict[str, Any], message: dict[str, Any], custom_id: str
    ) -> dict[str, Any]:
        """INTERACTION_CREATE for a click on the button `custom_id` of `message`."""
        payload = self._payload(
            3, int(message["channel_id"]), user, {"custom_id": custom_id, "component_type": 2}
        )
        payload["message"] = message
        return payload

    def _payload(
        self, kind: int, channel_id: int, user: dict[str, Any], data: dict[str, Any]
    ) -> dict[str, Any]:
        interaction_id = self.fake.snowflake()
        token = f"itok{interaction_id}"
        asked = Asked(interaction_id, token, channel_id, kind)
        self.asked[interaction_id] = asked
        self._by_token[token] = asked
        return {
            "id": str(interaction_id),
            "application_id": str(APP_ID),
            "type": kind,
            "token": token,
            "version": 1,
            "guild_id": str(GUILD_ID),
            "channel_id": str(channel_id),
            "channel": self.channel_json(channel_id),
            "member": {
                "user": user,
                "roles": [],
                "joined_at": "2026-01-01T00:00:00+00:00",
                "deaf": False,
                "mute": False,
                "flags": 0,
                "permissions": EVERYTHING,
            },
            "app_permissions": EVERYTHING,
            "locale": "en-US",
            "guild_locale": "en-US",
            "attachment_size_limit": 10 * 1024 * 1024,
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(GUILD_ID)},
            "context": 0,
            "data": data,
        }

    def replies(self, interaction_id: int) -> list[Reply]:
        return self.asked[interaction_id].replies

    def channel_json(self, channel_id: int) -> dict[str, Any]:
        channel = self.fake.channels[channel_id]
        parent = channel["parent_id"]
        data: dict[str, Any] = {
            "id": str(channel_id),
            "guild_id": str(channel["guild_id"]),
            "name": channel.get("name", "debates" if parent is None else "debate"),
            "type": 0 if parent is None else 11,
            "position": 0,
            "permissions": EVERYTHING,
        }
        if parent is not None:
            data.update(
                parent_id=str(parent),
                owner_id=str(APP_ID),
                message_count=len(self.fake.in_channel(channel_id)),
                member_count=1,
                thread_metadata={
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": discord.utils.utcnow().isoformat(),
                    "locked": False,
                },
            )
        return data

    # --- what the bot sends back ----------------------------------------------------------------

    def route(self, req: Request) -> tuple[int, Any] | None:
        p, m = req.path, req.method
        if re.fullmatch(r"/applications/\d+(/guilds/\d+)?/commands", p):
            given = req.body.get("items", []) if m == "PUT" else []
            return 200, [_command(c) for c in given]
        if mt := re.fullmatch(r"/interactions/(\d+)/([^/]+)/callback", p):
            return self._callback(int(mt.group(1)), req.body)
        if (mt := re.fullmatch(r"/webhooks/(\d+)/([^/]+)", p)) and int(mt.group(1)) == APP_ID and m == "POST":
            return self._followup(mt.group(2), req.body)
        mt = re.fullmatch(r"/webhooks/(\d+)/([^/]+)/messages/(@original|\d+)", p)
        if mt and int(mt.group(1)) == APP_ID:
            return self._original(mt.group(2), mt.group(3), m, req.body)
        if (mt := re.fullmatch(r"/channels/(\d+)/threads", p)) and m == "POST":
            parent = int(mt.group(1))
            guild = self.fake.channels[parent]["guild_id"]
            thread_id = self.fake.add_channel(parent_id=parent, guild_id=guild)
            self.fake.channels[thread_id]["name"] = str(req.body.get("name") or "debate")
            return 201, self.channel_json(thread_id)
        if (mt := re.fullmatch(r"/channels/(\d+)", p)) and m == "GET":
            return 200, self.channel_json(int(mt.group(1)))
        if (mt := re.fullmatch(r"/channels/(\d+)", p)) and m == "DELETE":
            data = self.channel_json(int(mt.group(1)))
            self.fake.delete_channel(int(mt.group(1)))
            return 200, data
        if (mt := re.fullmatch(r"/guilds/(\d+)/threads/active", p)) and m == "GET":
            guild = int(mt.group(1))
            threads = [
                self.channel_json(cid)
                for cid, c in self.fake.channels.items()
                if c["parent_id"] is not None and c["guild_id"] == guild and c["gone"] is None
            ]
            return 200, {"threads": threads, "members": []}
        if (mt := re.fullmatch(r"/channels/\d+/messages/(\d+)", p)) and m == "GET":
            message = self.fake.messages.get(int(mt.group(1)))
            if message is None or int(mt.group(1)) in self.fake.deleted:
                return 404, {"message": "Unknown Message", "code": 10008}
            return 200, message
        return None

    def _callback(self, interaction_id: int, body: dict[str, Any]) -> tuple[int, Any]:
        asked = self.asked.get(interaction_id)
        if asked is None:
            return 404, {"message": "Unknown interaction", "code": 10062}
        if asked.answered_at is not None:
            return 400, {"message": "Interaction has already been acknowledged.", "code": 40060}
        asked.answered_at = time.monotonic()
        kind = int(body.get("type", 0))
        data = body.get("data") or {}
        ephemeral = bool(int(data.get("flags") or 0) & EPHEMERAL)
        answer: dict[str, Any] = {
            "interaction": {
                "id": str(interaction_id),
                "type": asked.type,
                "response_message_loading": kind == 5,
                "response_message_ephemeral": ephemeral,
            }
        }
        if kind in (4, 5):
            reply = self._reply(asked, data, ephemeral=ephemeral, loading=kind == 5)
            if kind == 5:
                asked.deferred = reply
            answer["interaction"]["response_message_id"] = str(reply.id)
            answer["resource"] = {"type": kind, "message": self._message_json(asked, reply)}
        elif kind == 7:  # the clicked message updated in place
            answer["resource"] = {"type": kind}
        return 200, answer

    def _followup(self, token: str, body: dict[str, Any]) -> tuple[int, Any]:
        asked = self._by_token.get(token)
        if asked is None:
            return 404, {"message": "Unknown Webhook", "code": 10015}
        deferred = asked.deferred
        if deferred is not None and deferred.loading:  # the first follow-up completes "thinking…"
            deferred.loading = False
            deferred.content = str(body.get("content") or "")
            deferred.components = list(body.get("components") or [])
            deferred.files = _file_names(body)
            self._publish(asked, deferred)
            return 200, self._message_json(asked, deferred)
        ephemeral = bool(int(body.get("flags") or 0) & EPHEMERAL)
        reply = self._reply(asked, body, ephemeral=ephemeral, loading=False)
        return 200, self._message_json(asked, reply)

    def _original(self, token: str, which: str, method: str, body: dict[str, Any]) -> tuple[int, Any]:
        asked = self._by_token.get(token)
        if asked is None or not asked.replies:
            return 404, {"message": "Unknown Message", "code": 10008}
        reply = (
            asked.replies[0]
            if which == "@original"
            else next((r for r in asked.replies if r.id == int(which)), None)
        )
        if reply is None:
            return 404, {"message": "Unknown Message", "code": 10008}
        if method == "PATCH":
            if "content" in body:
                reply.content = str(body.get("content") or "")
            if "components" in body:
                reply.components = list(body.get("components") or [])
            if "attachments" in body:  # the kept and the new ones
                reply.files = _file_names(body)
            reply.loading = False
            self._publish(asked, reply)
        elif method == "DELETE":
            asked.replies.remove(reply)
            return 204, None
        return 200, self._message_json(asked, reply)

    def _reply(self, asked: Asked, data: dict[str, Any], *, ephemeral: bool, loading: bool) -> Reply:
        reply = Reply(
            self.fake.snowflake(),
            str(data.get("content") or ""),
            ephemeral,
            list(data.get("components") or []),
            loading=loading,
            files=_file_names(data),
        )
        asked.replies.append(reply)
        if not loading:
            self._publish(asked, reply)
        return reply

    def _publish(self, asked: Asked, reply: Reply) -> None:
        """A public reply is a message in its channel (people can click its buttons)."""
        if not reply.ephemeral:
            self.fake.messages[reply.id] = self._message_json(asked, reply)

    def _message_json(self, asked: Asked, reply: Reply) -> dict[str, Any]:
        return {
            "id": str(reply.id),
            "channel_id": str(asked.channel_id),
            "author": {
                "id": str(APP_ID),
                "username": "Rostra",
                "discriminator": "0000",
                "avatar": None,
                "bot": True,
            },
            "content": reply.content,
            "timestamp": discord.utils.snowflake_time(reply.id).isoformat(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 20,
            "flags": (EPHEMERAL if reply.ephemeral else 0) | (128 if reply.loading else 0),
            "components": reply.components,
            "webhook_id": str(APP_ID),
            "application_id": str(APP_ID),
        }


APP_ID = 4242  # the bot's user id is its application id (testkit.discord_rest.BOT_ID)
BOT_COMMAND_ID = 777


def _option_type(value: Any) -> int:
    if isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return 4
    return 3


def _command(given: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": 1,
        "description": "",
        "options": [],
        **given,
        "id": str(BOT_COMMAND_ID),
        "application_id": str(APP_ID),
        "version": "1",
        "default_member_permissions": None,
        "dm_permission": True,
        "nsfw": False,
    }


def _file_names(body: dict[str, Any]) -> list[str]:
    """The names of the files a message body attaches (multipart parts, or attachments kept)."""
    return [str(a.get("filename") or "") for a in body.get("attachments") or []]
