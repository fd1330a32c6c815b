"""A local stand-in for the parts of Discord's REST API a debate thread uses, on loopback HTTP.

simcord replaces discord.py's HTTP client, so discord.py's own rate-limit and 5xx handling never
runs there. This fake is reached by the real client instead (`discord.http.Route.BASE` pointed at it,
see `pointed_at`), and is as strict as Discord's published rules:

- rate limits with Discord's headers (`X-RateLimit-Limit/Remaining/Reset-After/Bucket`) and 429
  bodies (`retry_after`, `global`): per webhook 5 requests per 2 s, per channel 5 message requests
  per 5 s, reactions 1 per 0.25 s per channel, and the bot's global 50 requests per second; and
  webhook posts 30 a minute per channel they land in (a thread being a channel, as Discord's staff
  describe the limit; Discord does not publish it), at most 15 webhooks a channel (400/30007);
- faults on demand: an error answer (optionally after the request was carried out, as when Discord
  stores a message and the gateway in front of it answers 502), a Cloudflare-style 429 (no `Via`
  header, an HTML body), and threads that are gone (404/10003) or forbidden (403/50001);
- `nonce` + `enforce_nonce` on bot messages: a second post with the same nonce returns the first;
- attachments as Discord takes them: at most 10 files and 10 MiB a message (else 400/50035 or
  413/40005), each with its description (alt text); an embed image `attachment://<filename>` becomes
  the attachment's URL, one naming no attachment of the message is dropped (Discord shows none);
- webhook usernames: one containing "clyde" or "discord" (any case) is refused 400/50035, as Discord
  refuses it; `refuse_names` adds further names Discord may refuse (matched without zero-width
  characters, as a stricter check than Discord's published one would).

The server's lifecycle, the request log, faults, rate windows and `wait_until` are the shared base's
(testkit/server.py); this module holds only Discord's answers and rules.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import discord
from aiohttp import BodyPartReader, WSMsgType, web

from testkit.discord_interactions import Interactions
from testkit.server import FakeServer, Fault, Window

EPOCH_MS = 1420070400000
BOT_ID = 4242
API = "/api/v10"


@dataclass
class Request:
    method: str
    path: str  # without the /api/v10 prefix
    query: dict[str, str]
    body: dict[str, Any]
    status: int = 0
    at: float = field(default_factory=time.monotonic)


MAX_FILES = 10
MAX_UPLOAD = 10 * 1024 * 1024
"""Files a message may carry, and their bytes in all (a server without boosts)."""


@dataclass
class Limits:
    """Discord's published limits (defaults); tests may shrink the windows."""

    webhook: tuple[int, float] = (5, 2.0)
    channel: tuple[int, float] = (5, 5.0)
    reaction: tuple[int, float] = (1, 0.25)
    global_: tuple[int, float] = (50, 1.0)
    webhook_posts: tuple[int, float] = (30, 60.0)
    webhooks_per_channel: int = 15


class FakeDiscordREST(FakeServer[Request]):
    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__()
        self.limits = limits or Limits()
        self.messages: dict[int, dict[str, Any]] = {}  # id → message JSON as Discord returns it
        self.channels: dict[int, dict[str, Any]] = {}  # id → {"parent_id": ..., "gone": ..., ...}
        self.webhooks: dict[int, dict[str, Any]] = {}
        self.reactions: dict[int, list[str]] = {}  # message id → emojis the bot added
        self.deleted: set[int] = set()
        self._nonces: dict[tuple[int, str], int] = {}
        self.files: dict[int, bytes] = {}  # attachment id → the file's bytes
        self.refused_names: set[str] = {"clyde", "discord"}
        """Webhook usernames containing one of these (any case) are refused with 400/50035."""
        self._strict_names = False
        self._ids = itertools.count(1)
        self.answered: list[Callable[[Request, int, Any], None]] = []  # told each carried-out answer
        self.identified: list[dict[str, Any]] = []  # IDENTIFY payloads the gateway received
        self.interactions = Interactions(self)
        """Slash commands and clicks, and the bot's answers to them (testkit/discord_interactions.py)."""
        self.app.router.add_route("*", API + "/{tail:.*}", self._handle)
        self.app.router.add_get("/gateway", self._gateway)

    @property
    def gateway_url(self) -> str:
        """A gateway that says hello and takes IDENTIFY, but never makes the bot ready."""
        return self.root.replace("http://", "ws://") + "/gateway"

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_json({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        async for message in socket:
            if message.type == WSMsgType.TEXT and (payload := json.loads(message.data)).get("op") == 2:
                self.identified.append(payload)
        return socket

    @property
    def base(self) -> str:
        """The API's base URL (with /api/v10), as discord.py's `Route.BASE` wants it."""
        return self.root + API

    @contextlib.contextmanager
    def pointed_at(self) -> Iterator[None]:
        """discord.py's HTTP client and its webhooks talk to this fake while inside."""
        before = discord.http.Route.BASE
        discord.http.Route.BASE = self.base
        try:
            yield
        finally:
            discord.http.Route.BASE = before

    # --- the world --------------------------------------------------------------------------------

    def snowflake(self) -> int:
        return ((int(time.time() * 1000) - EPOCH_MS) << 22) + next(self._ids)

    def add_channel(self, *, parent_id: int | None = None, guild_id: int = 1) -> int:
        channel_id = self.snowflake()
        self.channels[channel_id] = {"parent_id": parent_id, "guild_id": guild_id, "gone": None}
        return channel_id

    def delete_channel(self, channel_id: int) -> None:
        """The thread (or channel) is deleted: 404 Unknown Channel from now on."""
        self.channels[channel_id]["gone"] = (404, 10003, "Unknown Channel")

    def add_webhook(self, channel_id: int, name: str = "Rostra") -> dict[str, Any]:
        """A webhook in the channel, as if the bot had made it (its `id` and `token`)."""
        return self._create_webhook(channel_id, name)

    def delete_webhook(self, hook_id: int) -> None:
        """Someone deleted the webhook: its posts and edits answer 404 Unknown Webhook from now on
        (its messages stay)."""
        del self.webhooks[hook_id]

    def forbid_channel(self, channel_id: int) -> None:
        """The bot lost access to it: 403 Missing Access from now on."""
        self.channels[channel_id]["gone"] = (403, 50001, "Missing Access")

    def fail(
        self,
        method: str,
        path: str,
        *,
        status: int = 502,
        code: int = 0,
        message: str = "Bad Gateway",
        after_store: bool = False,
        cloudflare: bool = False,
        times: int | None = 1,
        when: Callable[[dict[str, Any]], bool] = lambda body: True,
        for_seconds: float | None = None,
    ) -> None:
        """Answer matching requests (`path` a regex over the path after /api/v10, `when` on the
        body) with an error; with `for_seconds`, every matching request for that long (an outage)."""
        pattern = re.compile(path)
        self.add_fault(
            Fault(
                matches=lambda r: r.method == method and bool(pattern.fullmatch(r.path)) and when(r.body),
                status=status,
                body=(
                    "<html>Error 1015: You are being rate limited</html>"
                    if cloudflare
                    else {"message": message, "code": code}
                ),
                after_store=after_store,
                edge=cloudflare,
                times=None if for_seconds is not None else times,
                until=None if for_seconds is None else time.monotonic() + for_seconds,
            )
        )

    def exhaust(self, bucket: str) -> None:
        """Spend a whole bucket now (`webhook:<id>`, `channel:<id>`, `global`), as another process of
        the same bot would: the next request in it is answered 429."""
        limit, per = {
            "webhook": self.limits.webhook,
            "channel": self.limits.channel,
            "reaction": self.limits.reaction,
            "global": self.limits.global_,
            "webhook_posts": self.limits.webhook_posts,
        }[bucket.split(":")[0]]
        self.exhaust_window(bucket, limit, per, time.monotonic())

    def refuse_names(self, *words: str) -> None:
        """Refuse webhook usernames containing `words` as well, even with zero-width characters
        inside them (as if Discord read through them)."""
        self.refused_names |= {w.casefold() for w in words}
        self._strict_names = True

    def _refused_username(self, body: dict[str, Any]) -> str | None:
        name = str(body.get("username") or "").casefold()
        if self._strict_names:
            name = re.sub(ZERO_WIDTH, "", name)
        return next((word for word in sorted(self.refused_names) if word in name), None)

    def in_channel(self, channel_id: int) -> list[dict[str, Any]]:
        """The channel's (or thread's) messages as they stand now, oldest first."""
        return [
            m
            for mid, m in sorted(self.messages.items())
            if int(m["channel_id"]) == channel_id and mid not in self.deleted
        ]

    def sent(self, method: str, pattern: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    # --- answering --------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body = await _body(request)
        req = self.record(Request(request.method, path, dict(request.query), body))
        now = time.monotonic()
        limited = self._limit(req, now)
        if limited is not None:
            req.status = 429
            self.rate_limited.append(req)
            return limited
        fault = self.fault_for(req)
        if fault is not None and fault.edge:  # a proxy's page: no Via header, an HTML body
            req.status = fault.status
            return web.Response(status=fault.status, text=str(fault.body))
        gone = self._gone(req)
        if gone is not None:
            req.status = gone[0]
            return _error(*gone)
        if fault is not None and not fault.after_store:
            req.status = fault.status
            return _json(fault.body, status=fault.status)
        status, payload = self._route(req)
        for observer in self.answered:
            observer(req, status, payload)
        if fault is not None:  # carried out, answered an error anyway
            req.status = fault.status
            return _json(fault.body, status=fault.status)
        req.status = status
        headers = self._rate_headers(req, now)
        if payload is None:
            return web.Response(status=status, headers=headers)
        return _json(payload, status=status, headers=headers)

    def _buckets_for(self, req: Request) -> list[Window]:
        names: list[tuple[str, tuple[int, float]]] = [("global", self.limits.global_)]
        if m := re.match(r"/webhooks/(\d+)/[^/]+", req.path):
            names.append((f"webhook:{m.group(1)}", self.limits.webhook))
            hook = self.webhooks.get(int(m.group(1)))
            if req.method == "POST" and hook is not None and m.end() == len(req.path):
                landing = req.query.get("thread_id") or hook["channel_id"]
                names.append((f"webhook_posts:{landing}", self.limits.webhook_posts))
        elif m := re.match(r"/channels/(\d+)/messages/\d+/reactions/", req.path):
            names.append((f"reaction:{m.group(1)}", self.limits.reaction))
        elif (m := re.match(r"/channels/(\d+)/messages", req.path)) and req.method != "GET":
            names.append((f"channel:{m.group(1)}", self.limits.channel))
        return [self.window(name, limit, per) for name, (limit, per) in names]

    def _limit(self, req: Request, now: float) -> web.Response | None:
        limited = self.admit(self._buckets_for(req), now)
        if limited is None:
            return None
        bucket, wait = limited
        is_global = bucket.name == "global"
        headers = {"Retry-After": str(max(1, round(wait))), "X-RateLimit-Scope": "user", "Via": "1.1 google"}
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        else:
            headers.update(self._bucket_headers(bucket, now))
        payload = {"message": "You are being rate limited.", "retry_after": round(wait, 3)}
        payload["global"] = is_global
        return _json(payload, status=429, headers=headers)

    def _rate_headers(self, req: Request, now: float) -> dict[str, str]:
        specific = [b for b in self._buckets_for(req) if b.name != "global"]
        headers = {"Via": "1.1 google"}
        if specific:
            headers.update(self._bucket_headers(specific[0], now))
        return headers

    @staticmethod
    def _bucket_headers(bucket: Window, now: float) -> dict[str, str]:
        reset_after = bucket.reset_after(now)
        return {
            "X-RateLimit-Limit": str(bucket.limit),
            "X-RateLimit-Remaining": str(bucket.remaining(now)),
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Bucket": bucket.name.split(":")[0],
        }

    def _gone(self, req: Request) -> tuple[int, int, str] | None:
        channel_id: int | None = None
        if m := re.match(r"/channels/(\d+)", req.path):
            channel_id = int(m.group(1))
        elif req.path.startswith("/webhooks/") and "thread_id" in req.query:
            channel_id = int(req.query["thread_id"])
        if channel_id is None:
            return None
        channel = self.channels.get(channel_id)
        if channel is None:
            return (404, 10003, "Unknown Channel")
        gone: tuple[int, int, str] | None = channel["gone"]
        return gone

    def _route(self, req: Request) -> tuple[int, Any]:
        p, m = req.path, req.method
        answered = self.interactions.route(req)
        if answered is not None:
            return answered
        if p == "/users/@me":
            return 200, _user(BOT_ID, "Rostra", bot=True)
        if p == "/oauth2/applications/@me":
            owner = _user(1, "owner", bot=False)
            app = {"id": str(BOT_ID), "name": "Rostra", "icon": None, "description": "", "bot_public": True}
            return 200, {
                **app,
                "bot_require_code_grant": False,
                "owner": owner,
                "verify_key": "0",
                "flags": 0,
            }
        if mt := re.fullmatch(r"/channels/(\d+)/webhooks", p):
            channel_id = int(mt.group(1))
            if m == "GET":
                return 200, [h for h in self.webhooks.values() if int(h["channel_id"]) == channel_id]
            word = self._refused_username({"username": req.body.get("name")})
            if word is not None:
                return 400, _invalid_username(word)
            if (
                sum(int(h["channel_id"]) == channel_id for h in self.webhooks.values())
                >= self.limits.webhooks_per_channel
            ):
                reached = f"Maximum number of webhooks reached ({self.limits.webhooks_per_channel})"
                return 400, {"message": reached, "code": 30007}
            return 200, self._create_webhook(channel_id, str(req.body.get("name", "hook")))
        if m == "POST" and (refused := _refused_files(req.body)) is not None:
            return refused
        if mt := re.fullmatch(r"/channels/(\d+)/messages", p):
            channel_id = int(mt.group(1))
            if m == "GET":
                return 200, self._history(channel_id, req.query)
            return 200, self._bot_post(channel_id, req.body)
        if mt := re.fullmatch(r"/channels/(\d+)/messages/(\d+)", p):
            return self._edit_or_delete(int(mt.group(2)), m, req.body, webhook_id=None)
        if mt := re.fullmatch(r"/channels/(\d+)/messages/(\d+)/reactions/([^/]+)/@me", p):
            message_id = int(mt.group(2))
            if message_id not in self.messages or message_id in self.deleted:
                return 404, {"message": "Unknown Message", "code": 10008}
            self.reactions.setdefault(message_id, []).append(mt.group(3))
            return 204, None
        if mt := re.fullmatch(r"/webhooks/(\d+)/([^/]+)", p):
            hook = self.webhooks.get(int(mt.group(1)))
            if hook is None or hook["token"] != mt.group(2):
                return 404, {"message": "Unknown Webhook", "code": 10015}
            word = self._refused_username(req.body) if m == "POST" else None
            if word is not None:
                return 400, _invalid_username(word)
            return 200, self._webhook_post(hook, req)
        if mt := re.fullmatch(r"/webhooks/(\d+)/([^/]+)/messages/(\d+)", p):
            if int(mt.group(1)) not in self.webhooks:
                return 404, {"message": "Unknown Webhook", "code": 10015}
            return self._edit_or_delete(int(mt.group(3)), m, req.body, webhook_id=int(mt.group(1)))
        return 404, {"message": "404: Not Found", "code": 0}

    def _create_webhook(self, channel_id: int, name: str) -> dict[str, Any]:
        hook_id = self.snowflake()
        hook = {
            "id": str(hook_id),
            "type": 1,
            "channel_id": str(channel_id),
            "guild_id": str(self.channels[channel_id]["guild_id"]),
            "name": name,
            "avatar": None,
            "token": f"tok{hook_id}",
            "application_id": None,
            "user": _user(BOT_ID, "Rostra", bot=True),
        }
        self.webhooks[hook_id] = hook
        return hook

    def _message(self, channel_id: int, body: dict[str, Any], author: dict[str, Any]) -> dict[str, Any]:
        message_id = self.snowflake()
        attachments = [self._attachment(a) for a in body.get("attachments") or []]
        message = {
            "id": str(message_id),
            "channel_id": str(channel_id),
            "author": author,
            "content": body.get("content") or "",
            "timestamp": discord.utils.snowflake_time(message_id).isoformat(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": attachments,
            "embeds": [_resolved(e, attachments) for e in body.get("embeds") or []],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": body.get("components") or [],
        }
        if body.get("nonce") is not None:
            message["nonce"] = body["nonce"]
        self.messages[message_id] = message
        return message

    def _attachment(self, given: dict[str, Any]) -> dict[str, Any]:
        attachment_id = self.snowflake()
        filename = str(given.get("filename") or "file")
        data: bytes = given.get("data", b"")
        self.files[attachment_id] = data
        attachment = {
            "id": str(attachment_id),
            "filename": filename,
            "size": len(data),
            "url": f"https://cdn.discordapp.com/attachments/0/{attachment_id}/{filename}",
            "proxy_url": f"https://media.discordapp.net/attachments/0/{attachment_id}/{filename}",
        }
        if given.get("description"):
            attachment["description"] = given["description"]
        return attachment

    def _bot_post(self, channel_id: int, body: dict[str, Any]) -> dict[str, Any]:
        nonce = body.get("nonce")
        if nonce is not None and body.get("enforce_nonce"):
            earlier = self._nonces.get((channel_id, str(nonce)))
            if earlier is not None and earlier not in self.deleted:
                return self.messages[earlier]
        message = self._message(channel_id, body, _user(BOT_ID, "Rostra", bot=True))
        if nonce is not None:
            self._nonces[(channel_id, str(nonce))] = int(message["id"])
        return message

    def _webhook_post(self, hook: dict[str, Any], req: Request) -> dict[str, Any]:
        channel_id = int(req.query.get("thread_id") or hook["channel_id"])
        author = _user(int(hook["id"]), str(req.body.get("username") or hook["name"]), bot=True)
        message = self._message(channel_id, req.body, author)
        message["webhook_id"] = hook["id"]
        if req.body.get("avatar_url"):
            message["author"]["avatar_url"] = req.body["avatar_url"]
        return message

    def _edit_or_delete(
        self, message_id: int, method: str, body: dict[str, Any], *, webhook_id: int | None
    ) -> tuple[int, Any]:
        message = self.messages.get(message_id)
        if message is None or message_id in self.deleted:
            return 404, {"message": "Unknown Message", "code": 10008}
        if webhook_id is not None and message.get("webhook_id") != str(webhook_id):
            return 404, {"message": "Unknown Message", "code": 10008}
        if method == "DELETE":
            self.deleted.add(message_id)
            return 204, None
        for key in ("content", "embeds", "components"):
            if key in body:
                message[key] = body[key] if body[key] is not None else ("" if key == "content" else [])
        message["edited_timestamp"] = discord.utils.utcnow().isoformat()
        return 200, message

    def _history(self, channel_id: int, query: dict[str, str]) -> list[dict[str, Any]]:
        """Newest first, like Discord; with `after`, the `limit` messages right after that id."""
        limit = int(query.get("limit", "50"))
        oldest_first = self.in_channel(channel_id)
        if "after" in query:
            after = [m for m in oldest_first if int(m["id"]) > int(query["after"])][:limit]
            return list(reversed(after))
        return list(reversed(oldest_first))[:limit]


def _refused_files(body: dict[str, Any]) -> tuple[int, Any] | None:
    """Discord's answer to a message with too many files or too many bytes of them (else None)."""
    files = [a for a in body.get("attachments") or [] if "data" in a]
    if len(files) > MAX_FILES:
        return 400, {"message": "Invalid Form Body", "code": 50035}
    if sum(len(a["data"]) for a in files) > MAX_UPLOAD:
        return 413, {"message": "Request entity too large", "code": 40005}
    return None


def _resolved(embed: dict[str, Any], attachments: list[dict[str, Any]]) -> dict[str, Any]:
    """An embed image `attachment://<filename>` as Discord shows it: the attachment's URL, or none."""
    url = str((embed.get("image") or {}).get("url") or "")
    if not url.startswith("attachment://"):
        return embed
    named = next((a for a in attachments if a["filename"] == url.removeprefix("attachment://")), None)
    if named is None:
        return {k: v for k, v in embed.items() if k != "image"}
    return {**embed, "image": {"url": named["url"], "proxy_url": named["proxy_url"]}}


def _user(user_id: int, name: str, *, bot: bool) -> dict[str, Any]:
    return {"id": str(user_id), "username": name, "discriminator": "0000", "avatar": None, "bot": bot}


ZERO_WIDTH = "[\u200b\u200c\u200d\u2060\ufeff]"


def _invalid_username(word: str) -> dict[str, Any]:
    """Discord's answer to a webhook username it does not allow."""
    error = {"code": "USERNAME_INVALID_CONTAINS", "message": f'Username cannot contain "{word}"'}
    return {"message": "Invalid Form Body", "code": 50035, "errors": {"username": {"_errors": [error]}}}


def _json(payload: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """JSON as Discord sends it: discord.py reads a body as JSON only for exactly `application/json`."""
    return web.Response(
        body=json.dumps(payload).encode(),
        status=status,
        headers={**(headers or {}), "Content-Type": "application/json"},
    )


def _error(status: int, code: int, message: str) -> web.Response:
    return _json({"message": message, "code": code}, status=status)


async def _body(request: web.Request) -> dict[str, Any]:
    if request.content_type == "application/json":
        raw = await request.text()
        data = json.loads(raw) if raw else {}
        return data if isinstance(data, dict) else {"items": data}  # a list (a command sync)
    if request.content_type.startswith("multipart/"):
        payload: dict[str, Any] = {}
        files = []
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, BodyPartReader):
                continue
            data = await part.read(decode=True)
            if part.name == "payload_json":
                payload.update(json.loads(data))
            else:
                files.append({"filename": part.filename or "file", "size": len(data), "data": bytes(data)})
        if files:  # the payload's attachment entries (filename, description) with their parts' bytes
            described = payload.get("attachments") or []
            payload["attachments"] = [
                {**file, **(described[i] if i < len(described) else {}), "data": file["data"]}
                for i, file in enumerate(files)
            ]
        return payload
    return {}
