"""A local stand-in for the Slack Web API (and the Socket Mode WebSocket), in the test's own loop.

It records every call (query, form and JSON arguments merged), keeps the workspace's state the way
Slack would (messages with edits, reactions per person, ephemeral messages, uploaded files), answers
like Slack does (`ts`, `message_not_found`, `already_reacted`, `missing_scope`), and can answer 429
with Retry-After. Slash-command `response_url`s point here too.

Strict where Slack is: `chat.update` keeps the message's text but not the custom `username`/icon it
was posted with (reported for real workspaces; the default delivery must not depend on it), and with
`enforce_limits()` the published rate limits answer 429 + Retry-After: Tier 3 (about 50 per minute)
per workspace and method for `chat.update` and `reactions.add`, Tier 4 (about 100 per minute) for a
file upload's two calls, and about one `chat.postMessage` per second per channel. An upload must
send the length it announced; files keep their bytes (`data`) and, as text, their `content`.
`fail_next(..., status=DROP_AFTER)` carries a call out and then drops the connection without
answering (Slack accepted the post; the client cannot know).

The server's lifecycle, the call log, faults, rate windows and `wait_until` are the shared base's
(testkit/server.py); this module holds only Slack's answers and rules.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

from testkit.server import FakeServer, Fault, Window
from testkit.slack_views import SlackInstalls, SlackViews

TEAM = "T0001"
BOT_USER = "UBOT"
BOT_ID = "BBOT"
DROP = 0  # fail_next(status=DROP): close the connection without answering
DROP_AFTER = -1  # fail_next(status=DROP_AFTER): carry the call out, then close without answering
SCOPES = (
    "app_mentions:read,channels:history,groups:history,chat:write,chat:write.customize,commands,files:read,files:write,"
    "im:history,reactions:read,reactions:write,usergroups:read,channels:read,groups:read,users:read"
)


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    token: str | None
    at: float = field(default_factory=time.monotonic)


@dataclass
class Hold:
    """A call that gets no answer until released (Slack slow, or the bot killed while waiting)."""

    when: Callable[[dict[str, Any]], bool]
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    held: bool = False
    abandoned: bool = False


@dataclass
class Limits:
    """Slack's published limits: Tier 3 and Tier 4 (file uploads) per workspace and method, posts
    per channel."""

    tier3: tuple[int, float] = (50, 60.0)
    post_per_channel: tuple[int, float] = (1, 1.0)
    tier3_methods: tuple[str, ...] = ("chat.update", "reactions.add")
    tier4: tuple[int, float] = (100, 60.0)
    tier4_methods: tuple[str, ...] = ("files.getUploadURLExternal", "files.completeUploadExternal")


class FakeSlack(FakeServer[Call], SlackViews, SlackInstalls):
    def __init__(self) -> None:
        super().__init__()
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}  # (channel, ts) → message
        self.order: list[tuple[str, str]] = []  # messages in posting order
        self.posted: list[dict[str, Any]] = []  # each message as it was first posted (not edits)
        self.deleted: list[tuple[str, str]] = []
        self.ephemerals: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []  # posts to slash commands' response_url
        self.responses_down_until = 0.0  # `responses_down`: response_urls answer 500 till then
        self.reactions: dict[tuple[str, str], dict[str, list[str]]] = {}  # (channel, ts) → name → users
        self.usergroups: dict[str, list[str]] = {}
        self.channel_creators: dict[str, str] = {}  # channel → its creator (conversations.info)
        self.bot_users: set[str] = set()  # other apps' bot users (users.info says is_bot)
        self.files: dict[str, dict[str, Any]] = {}  # uploaded by the app
        self.shared: dict[str, tuple[dict[str, Any], bytes]] = {}  # shared by people: file → (info, bytes)
        self.downloads: list[Call] = []  # GETs of shared files' URLs
        self.scopes = SCOPES
        self.refuse_custom_names = False
        self.refuse_files = False
        self.refuse_sockets = False  # the Socket Mode WebSocket answers 503 (Slack unreachable)
        self.limits: Limits | None = None
        self._holds: dict[str, list[Hold]] = {}
        self._counter = itertools.count(1)
        # told each carried-out call: its method, arguments and answer
        self.answered: list[Callable[[str, dict[str, Any], dict[str, Any]], None]] = []
        self.ws: web.WebSocketResponse | None = None
        self.ws_acks: dict[str, dict[str, Any]] = {}
        app = self.app
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/files-pri/{file_id}/download/{name}", self._download)
        app.router.add_post("/respond/{name}", self._respond)
        app.router.add_get("/link", self._socket)

    # --- lifecycle ------------------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every Web API call, in the order received."""
        return self.requests

    @property
    def base_url(self) -> str:
        return f"{self.root}/api/"

    @property
    def ws_url(self) -> str:
        return self.root.replace("http://", "ws://", 1) + "/link"

    async def stop(self) -> None:
        for holds in self._holds.values():
            for hold in holds:  # a held call never reaches the workspace
                hold.abandoned = True
                hold.gate.set()
        if self.ws is not None:
            await self.ws.close()
        await super().stop()

    # --- test hooks -----------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: str = "1",
        error: str = "ratelimited",
        when: Callable[[dict[str, Any]], bool] = lambda args: True,
        for_seconds: float | None = None,
    ) -> None:
        """The next matching call fails; with `for_seconds`, every matching call for that long (an
        outage)."""
        headers = {"Retry-After": retry_after} if status == 429 else {}
        self.add_fault(
            Fault(
                matches=lambda call: call.method == method and when(call.args),
                status=status if status > 0 else 500,
                body={"ok": False, "error": error},
                headers=headers,
                after_store=status == DROP_AFTER,
                drop=status in (DROP, DROP_AFTER),
                times=1 if for_seconds is None else None,
                until=None if for_seconds is None else time.monotonic() + for_seconds,
            )
        )

    def down(self, seconds: float) -> None:
        """Slack down: every Web API call answers 500 for `seconds` (after any fault added before)."""
        body = {"ok": False, "error": "internal_error"}
        until = time.monotonic() + seconds
        self.add_fault(Fault(matches=lambda call: True, status=500, body=body, times=None, until=until))

    def responses_down(self, seconds: float) -> None:
        """Slack's response_urls (slash commands' later answers) answer 500 for `seconds`."""
        self.responses_down_until = time.monotonic() + seconds

    def enforce_limits(self, limits: Limits | None = None) -> None:
        """Answer 429 + Retry-After beyond the published rate limits (see `Limits`)."""
        self.limits = limits or Limits()

    def _window_for(self, method: str, args: dict[str, Any]) -> Window | None:
        if self.limits is None:
            return None
        if method in self.limits.tier3_methods:
            name, (limit, per) = f"{TEAM}:{method}", self.limits.tier3
        elif method in self.limits.tier4_methods:
            name, (limit, per) = f"{TEAM}:{method}", self.limits.tier4
        elif method == "chat.postMessage":
            name, (limit, per) = f"post:{args.get('channel')}", self.limits.post_per_channel
        else:
            return None
        return self.window(name, limit, per)

    def hold_next(self, method: str, *, when: Callable[[dict[str, Any]], bool] = lambda args: True) -> Hold:
        """The next matching call waits without an answer until `hold.gate` is set (or never)."""
        hold = Hold(when)
        self._holds.setdefault(method, []).append(hold)
        return hold

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def top_level(self, channel: str) -> list[dict[str, Any]]:
        return [
            self.messages[k] for k in self.order if k[0] == channel and "thread_ts" not in self.messages[k]
        ]

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The thread's replies as they stand now (edits applied, deleted ones gone), oldest first."""
        return [
            self.messages[k]
            for k in self.order
            if k[0] == channel and self.messages[k].get("thread_ts") == thread_ts and k not in self.deleted
        ]

    def person_says(self, channel: str, user: str, text: str, *, thread_ts: str | None = None) -> str:
        """A person's message, as Slack would store it (send any event separately); its ts."""
        ts = self._ts()
        message: dict[str, Any] = {"type": "message", "user": user, "text": text, "ts": ts}
        if thread_ts:
            message["thread_ts"] = thread_ts
        self.messages[(channel, ts)] = message
        self.order.append((channel, ts))
        return ts

    def react(self, channel: str, ts: str, name: str, user: str, *, added: bool = True) -> None:
        """A person's reaction, as Slack would store it (send the event separately)."""
        users = self.reactions.setdefault((channel, ts), {}).setdefault(name, [])
        if added and user not in users:
            users.append(user)
        elif not added and user in users:
            users.remove(user)

    def share_file(
        self,
        name: str,
        content: bytes | str,
        *,
        mimetype: str = "text/plain",
        filetype: str = "text",
        size: int | None = None,
        check_file_info: bool = False,
    ) -> dict[str, Any]:
        """A file a person attaches to a message; returns the `files` item Slack puts on the event."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        file_id = f"F{next(self._counter):06d}"
        info: dict[str, Any] = {
            "id": file_id,
            "created": int(time.time()),
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": filetype,
            "user": "UALICE",
            "size": len(data) if size is None else size,
            "mode": "hosted",
            "is_external": False,
            "url_private": f"{self.root}/files-pri/{file_id}/{name}",
            "url_private_download": f"{self.root}/files-pri/{file_id}/download/{name}",
            "file_access": "visible",
        }
        self.shared[file_id] = (info, data)
        if check_file_info:  # what Slack sends when the app must ask files.info
            return {"id": file_id, "mode": "file_access", "file_access": "check_file_info"}
        return dict(info)

    async def _download(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        self.downloads.append(
            Call("download", {"url": str(request.url)}, auth.removeprefix("Bearer ") or None)
        )
        self.changed()
        shared = self.shared.get(request.match_info["file_id"])
        if shared is None:
            return web.Response(status=404)
        if not auth.startswith("Bearer xoxb-") or "files:read" not in self.scopes.split(","):
            # Slack answers a request it will not serve with its sign-in page, not an error status.
            return web.Response(text="<!DOCTYPE html><html>Sign in to Slack</html>", content_type="text/html")
        return web.Response(body=shared[1], content_type="application/octet-stream")

    # --- the Web API ----------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        # dated from its headers: a request a process had begun sending when it was paused (SIGSTOP)
        # is not taken for one it sent after it woke, when the rest of it arrives
        began = time.monotonic()
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        raw = await request.text()
        if raw and request.content_type == "application/json":
            args.update(json.loads(raw))
        elif raw:
            args.update(parse_qsl(raw))
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") if auth else args.pop("token", None)
        call = self.record(Call(method, args, token, began))
        for hold in self._holds.get(method, []):
            if not hold.held and hold.when(args):
                hold.held = True
                self.changed()
                await hold.gate.wait()
                if hold.abandoned:
                    return web.json_response({"ok": False, "error": "fatal_error"}, status=500)
                break
        window = self._window_for(method, args)
        limited = None if window is None else self.admit([window], time.monotonic())
        if limited is not None:
            self.rate_limited.append(call)
            body = {"ok": False, "error": "ratelimited"}
            return web.json_response(body, status=429, headers={"Retry-After": str(math.ceil(limited[1]))})
        fault = self.fault_for(call)
        if fault is not None:
            if fault.after_store:
                self._answer(method, args)  # Slack carried it out ...
                self.changed()
            if fault.drop:
                self.drop_connection(request)  # ... and the client sees the server disconnect
            return web.json_response(fault.body, status=fault.status, headers=fault.headers)
        if method == "oauth.v2.access":  # the app's client id and secret, no token (slack_views.py)
            return web.json_response(self.oauth_v2_access(args, auth))
        if self.token_refused(token):
            return web.json_response({"ok": False, "error": "token_revoked"})
        self.current_token = token  # answers per workspace (slack_views.SlackInstalls)
        expected = "xapp-" if method == "apps.connections.open" else "xoxb-"
        if not token or not token.startswith(expected):
            return web.json_response({"ok": False, "error": "invalid_auth"})
        headers = {"x-oauth-scopes": self.scopes} if method == "auth.test" else {}
        return web.json_response(self._answer(method, args), headers=headers)

    def _ts(self) -> str:
        return f"{int(time.time())}.{next(self._counter):06d}"

    def _answer(self, method: str, a: dict[str, Any]) -> dict[str, Any]:
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        answer: dict[str, Any] = handler(a) if handler is not None else {"ok": True}
        for observer in self.answered:
            observer(method, a, answer)
        return answer

    def _auth_test(self, a: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://rostra-test.slack.com/",
            "team": "Rostra Test",
            "user": "rostra",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
            **self.identity(),
        }

    def _apps_connections_open(self, a: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": self.ws_url}

    def _chat_postMessage(self, a: dict[str, Any]) -> dict[str, Any]:
        if not a.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not (a.get("text") or a.get("blocks")):
            return {"ok": False, "error": "no_text"}
        custom = any(a.get(k) for k in ("username", "icon_emoji", "icon_url"))
        if custom and self.refuse_custom_names:
            return {"ok": False, "error": "missing_scope", "needed": "chat:write.customize"}
        ts = self._ts()
        message: dict[str, Any] = {"type": "message", "subtype": "bot_message", "text": a.get("text", "")}
        message.update({"ts": ts, "bot_id": BOT_ID})
        for key in ("username", "icon_emoji", "icon_url", "thread_ts", "blocks", "metadata"):
            if a.get(key):
                message[key] = json.loads(a[key]) if key == "metadata" and isinstance(a[key], str) else a[key]
        self.messages[(a["channel"], ts)] = message
        self.order.append((a["channel"], ts))
        self.posted.append(dict(message))
        return {"ok": True, "channel": a["channel"], "ts": ts, "message": message}

    def _conversations_replies(self, a: dict[str, Any]) -> dict[str, Any]:
        """The thread, oldest first (its root included), between `oldest` and `latest` (exclusive
        unless `inclusive`); message metadata only with `include_all_metadata`."""
        if "channels:history" not in self.scopes.split(","):
            return {"ok": False, "error": "missing_scope", "needed": "channels:history"}
        channel, root = a.get("channel", ""), a.get("ts", "")
        if (channel, root) not in self.messages:
            return {"ok": False, "error": "thread_not_found"}
        inclusive = str(a.get("inclusive", "")).lower() in ("1", "true")
        oldest, latest = float(a.get("oldest") or 0), float(a.get("latest") or "inf")
        found = []
        for key in self.order:
            message = self.messages[key]
            if (
                key[0] != channel
                or key in self.deleted
                or (key[1] != root and message.get("thread_ts") != root)
            ):
                continue
            ts = float(key[1])
            if (oldest < ts < latest) or (inclusive and ts in (oldest, latest)) or (key[1] == root):
                shown = dict(message)
                if str(a.get("include_all_metadata", "")).lower() not in ("1", "true"):
                    shown.pop("metadata", None)
                found.append(shown)
        return {"ok": True, "messages": found[: int(a.get("limit") or 1000)], "has_more": False}

    def _conversations_history(self, a: dict[str, Any]) -> dict[str, Any]:
        """The channel's top-level messages, newest first; metadata only with `include_all_metadata`."""
        if "channels:history" not in self.scopes.split(","):
            return {"ok": False, "error": "missing_scope", "needed": "channels:history"}
        channel, found = a.get("channel", ""), []
        for key in reversed(self.order):
            message = self.messages[key]
            if key[0] != channel or key in self.deleted or message.get("thread_ts") not in (None, key[1]):
                continue
            shown = dict(message)
            if str(a.get("include_all_metadata", "")).lower() not in ("1", "true"):
                shown.pop("metadata", None)
            found.append(shown)
        return {"ok": True, "messages": found[: int(a.get("limit") or 100)], "has_more": False}

    def _chat_update(self, a: dict[str, Any]) -> dict[str, Any]:
        key = (a.get("channel", ""), a.get("ts", ""))
        message = self.messages.get(key)
        if message is None or key in self.deleted:
            return {"ok": False, "error": "message_not_found"}
        message["text"] = a.get("text", "")
        message["blocks"] = a.get("blocks") or []
        for custom in ("username", "icons", "icon_emoji", "icon_url"):
            message.pop(custom, None)  # an edit shows the app's own name and icon again
        message["edited"] = {"user": BOT_USER, "ts": self._ts()}
        return {"ok": True, "channel": key[0], "ts": key[1], "text": message["text"], "message": message}

    def _chat_delete(self, a: dict[str, Any]) -> dict[str, Any]:
        key = (a.get("channel", ""), a.get("ts", ""))
        if key not in self.messages or key in self.deleted:
            return {"ok": False, "error": "message_not_found"}
        self.deleted.append(key)
        return {"ok": True, "channel": key[0], "ts": key[1]}

    def _chat_postEphemeral(self, a: dict[str, Any]) -> dict[str, Any]:
        self.ephemerals.append(dict(a))
        return {"ok": True, "message_ts": self._ts()}

    def _reactions_add(self, a: dict[str, Any]) -> dict[str, Any]:
        users = self.reactions.setdefault((a["channel"], a["timestamp"]), {}).setdefault(a["name"], [])
        me = self.identity().get("user_id", BOT_USER)  # the bot user of the token's workspace
        if me in users:
            return {"ok": False, "error": "already_reacted"}
        users.append(me)
        return {"ok": True}

    def _reactions_get(self, a: dict[str, Any]) -> dict[str, Any]:
        key = (a.get("channel", ""), a.get("timestamp", ""))
        message = self.messages.get(key)
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        reactions = [
            {"name": name, "users": list(users), "count": len(users)}
            for name, users in self.reactions.get(key, {}).items()
            if users
        ]
        return {
            "ok": True,
            "type": "message",
            "channel": key[0],
            "message": {**message, "reactions": reactions},
        }

    def _usergroups_users_list(self, a: dict[str, Any]) -> dict[str, Any]:
        group = a.get("usergroup", "")
        if group not in self.usergroups:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": self.usergroups[group]}

    def _chat_getPermalink(self, a: dict[str, Any]) -> dict[str, Any]:
        channel, ts = a.get("channel", ""), str(a.get("message_ts", ""))
        if (channel, ts) not in self.messages:
            return {"ok": False, "error": "message_not_found"}
        link = f"https://rostra-test.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        return {"ok": True, "channel": channel, "permalink": link}

    def _users_info(self, a: dict[str, Any]) -> dict[str, Any]:
        user = a.get("user", "")
        return {"ok": True, "user": {"id": user, "is_bot": user in self.bot_users}}

    def _conversations_info(self, a: dict[str, Any]) -> dict[str, Any]:
        channel = a.get("channel", "")
        return {
            "ok": True,
            "channel": {"id": channel, "creator": self.channel_creators.get(channel, "UNOBODY")},
        }

    def _files_info(self, a: dict[str, Any]) -> dict[str, Any]:
        shared = self.shared.get(a.get("file", ""))
        if shared is None:
            return {"ok": False, "error": "file_not_found"}
        return {"ok": True, "file": dict(shared[0])}

    def _files_list(self, a: dict[str, Any]) -> dict[str, Any]:
        channel, since = a.get("channel"), int(a.get("ts_from") or 0)
        found = [
            {"id": file_id, "name": f["filename"], "title": f.get("title"), "channels": [f["channel"]]}
            for file_id, f in reversed(self.files.items())
            if f.get("shared") and (channel is None or f.get("channel") == channel) and f["created"] >= since
        ]
        return {"ok": True, "files": found[: int(a.get("count", 100))]}

    def _files_getUploadURLExternal(self, a: dict[str, Any]) -> dict[str, Any]:
        if self.refuse_files:
            return {"ok": False, "error": "missing_scope", "needed": "files:write"}
        file_id = f"F{next(self._counter):06d}"
        self.files[file_id] = {
            "filename": a.get("filename"),
            "length": int(a.get("length", 0)),
            "alt_txt": a.get("alt_txt"),
            "created": int(time.time()),
        }
        return {"ok": True, "upload_url": f"{self.root}/upload/{file_id}", "file_id": file_id}

    def _files_completeUploadExternal(self, a: dict[str, Any]) -> dict[str, Any]:
        done = []
        for item in json.loads(a.get("files", "[]")):
            entry = self.files.get(item["id"])
            if entry is None:
                return {"ok": False, "error": "file_not_found"}
            entry.update(
                title=item.get("title"),
                channel=a.get("channel_id"),
                thread_ts=a.get("thread_ts"),
                shared=True,
            )
            done.append({"id": item["id"], "title": item.get("title")})
        return {"ok": True, "files": done}

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        if file_id not in self.files:
            return web.Response(status=404)
        data = await request.read()
        entry = self.files[file_id]
        if len(data) != entry["length"]:  # Slack takes the length announced for the upload URL
            return web.Response(status=400, text="length mismatch")
        entry["data"] = data  # as sent; `content` is the text of a text file
        entry["content"] = data.decode("utf-8", errors="replace")
        self.changed()
        return web.Response(text=f"OK - {len(data)}")

    async def _respond(self, request: web.Request) -> web.Response:
        if time.monotonic() < self.responses_down_until:  # Slack's hooks failing too
            return web.Response(status=500, text="internal_error")
        self.responses.append(await request.json())
        self.changed()
        return web.Response(text="ok")

    # --- Socket Mode ----------------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if self.refuse_sockets:
            return web.Response(status=503)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.ws = ws
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0001"}})
        self.changed()
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                if "envelope_id" in data:
                    self.ws_acks[data["envelope_id"]] = data
                    self.changed()
        return ws

    async def push_envelope(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Send one Socket Mode envelope; return the app's ack."""
        await self.wait_until(lambda: self.ws is not None)
        assert self.ws is not None
        envelope_id = str(uuid.uuid4())
        await self.ws.send_json(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": kind != "events_api",
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        await self.wait_until(lambda: envelope_id in self.ws_acks)
        return self.ws_acks[envelope_id]
