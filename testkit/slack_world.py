"""The Slack harness tests and benchmarks drive: the real app (`create_app`) over real HTTP, signed
like Slack signs, against the local fake Web API, with a real Runtime (scripted model, temp SQLite)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer

from adapters.slack import create_app
from adapters.slack.app import SlackApp
from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import Clock, FakeClock
from core.events import Event
from core.session import DebateHandle
from testkit.config import make_config, write_script
from testkit.slack_api import BOT_USER, TEAM, FakeSlack

BOT_TOKEN = "xoxb-1-rostra-test-token"
SIGNING_SECRET = "5f1a0c9e2b7d4e8fa3c6b1d0e9f87a21"
APP_TOKEN = "xapp-1-A0001-1-rostra-test"
CHANNEL = "C0DEBATE"
ALICE, BOB, CAROL, DAN, ERIN = "UALICE", "UBOB", "UCAROL", "UDAN", "UERIN"

SCRIPT: dict[str, Any] = {
    "proposition": ["Cities should ban cars from their centres.\n\nStreets are for people, not parking."],
    "opposition": ["A ban punishes the people with no other way to get to work."],
    "observer": [{"vote": "keep", "reason": "Clear and direct."}],
    "moderator": ["Both sides agreed streets matter; they split on who pays for the change."],
}

# The first proposition turn takes 10 s of debate time (a held clock keeps it going while a test
# looks at the running debate); the rest of the debate is quick.
SLOW_FIRST_TURN: dict[str, Any] = {
    **SCRIPT,
    "proposition": [{"say": "Cars out, people in.", "delay": 10}, "Cars out, people in."],
}


def sign(body: str, *, secret: str = SIGNING_SECRET, ts: int | None = None) -> dict[str, str]:
    """What Slack sends: v0=HMAC-SHA256(secret, "v0:{timestamp}:{body}")."""
    stamp = str(int(time.time()) if ts is None else ts)
    digest = hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


def envelope(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "token": "legacy",
        "team_id": TEAM,
        "api_app_id": "A0001",
        "type": "event_callback",
        "event_id": f"Ev{uuid.uuid4().hex[:12].upper()}",
        "event_time": int(time.time()),
        "event": event,
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
    }


def mention_event(
    text: str,
    *,
    user: str = ALICE,
    channel: str = CHANNEL,
    thread_ts: str | None = None,
    files: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    ts = f"{time.time():.6f}"
    event: dict[str, Any] = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
        "team": TEAM,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    if files:
        event["files"] = files
        event["upload"] = True
    return event


_last_event_ts = [0.0]


def _event_ts() -> str:
    """Now, strictly later than any event time given before (reactions are ordered by it)."""
    _last_event_ts[0] = max(time.time(), _last_event_ts[0] + 0.000001)
    return f"{_last_event_ts[0]:.6f}"


def reaction_event(added: bool, user: str, name: str, ts: str, channel: str = CHANNEL) -> dict[str, Any]:
    return {
        "type": "reaction_added" if added else "reaction_removed",
        "user": user,
        "reaction": name,
        "item_user": BOT_USER,
        "item": {"type": "message", "channel": channel, "ts": ts},
        "event_ts": _event_ts(),
    }


def slash_fields(text: str, *, user: str, channel: str, response_url: str) -> dict[str, str]:
    return {
        "token": "legacy",
        "team_id": TEAM,
        "team_domain": "rostra-test",
        "channel_id": channel,
        "channel_name": "debates",
        "user_id": user,
        "user_name": user.lower(),
        "command": "/debate",
        "text": text,
        "api_app_id": "A0001",
        "response_url": response_url,
        "trigger_id": f"{int(time.time())}.{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex[:16]}",
    }


@dataclass
class SlashReply:
    status: int
    body: dict[str, Any]
    seconds: float


@dataclass
class Harness:
    api: FakeSlack
    rt: Runtime
    app: SlackApp
    http: TestClient[Any, Any]
    clock: Clock

    async def post(
        self, body: str, content_type: str, headers: dict[str, str] | None = None
    ) -> ClientResponse:
        return await self.http.post(
            "/slack/events",
            data=body,
            headers={"Content-Type": content_type, **(sign(body) if headers is None else headers)},
        )

    async def event(self, event: dict[str, Any]) -> None:
        response = await self.post(json.dumps(envelope(event)), "application/json")
        assert response.status == 200, await response.text()

    async def mention(
        self,
        text: str,
        *,
        user: str = ALICE,
        channel: str = CHANNEL,
        thread_ts: str | None = None,
        files: list[dict[str, Any]] | None = None,
    ) -> None:
        await self.event(mention_event(text, user=user, channel=channel, thread_ts=thread_ts, files=files))

    async def slash(
        self, text: str, *, user: str = ALICE, channel: str = CHANNEL, trigger_id: str | None = None
    ) -> SlashReply:
        fields = slash_fields(
            text, user=user, channel=channel, response_url=f"{self.api.root}/respond/{user}"
        )
        if trigger_id is not None:
            fields["trigger_id"] = trigger_id
        started = time.perf_counter()
        response = await self.post(urlencode(fields), "application/x-www-form-urlencoded")
        seconds = time.perf_counter() - started
        raw = await response.text()
        body = json.loads(raw) if raw.startswith("{") else {"text": raw}
        return SlashReply(response.status, body, seconds)

    async def react(
        self, user: str, name: str, ts: str, *, added: bool = True, channel: str = CHANNEL
    ) -> None:
        """A person adds or removes a reaction: Slack stores it, then sends the event."""
        self.api.react(channel, ts, name, user, added=added)
        await self.event(reaction_event(added, user, name, ts, channel))

    async def settle(self) -> None:
        await asyncio.wait_for(self.app.front.wait_idle(), 20)

    def running(self, channel: str = CHANNEL) -> DebateHandle | None:
        return self.rt.manager.find(platform="slack", channel=channel)

    async def wait_running(self, channel: str = CHANNEL) -> DebateHandle:
        await self.api.wait_until(lambda: self.running(channel) is not None)
        handle = self.running(channel)
        assert handle is not None
        return handle

    def opening(self, channel: str = CHANNEL) -> dict[str, Any]:
        (card,) = [m for m in self.api.top_level(channel) if m.get("bot_id")]  # people's are not cards
        return card

    def thread(self, channel: str = CHANNEL) -> list[dict[str, Any]]:
        return self.api.thread(channel, self.opening(channel)["ts"])

    def ephemerals_to(self, user: str) -> list[str]:
        return [e["text"] for e in self.api.ephemerals if e["user"] == user]

    async def told(self, user: str, count: int = 1) -> str:
        """Wait for the `count`-th ephemeral message to `user`; return it."""
        await self.api.wait_until(lambda: len(self.ephemerals_to(user)) >= count, within=5)
        return self.ephemerals_to(user)[count - 1]

    async def events(self, debate_id: str) -> list[Event]:
        return await self.rt.store.events(debate_id)

    async def only_debate_id(self) -> str:
        (record,) = await self.rt.store.list_debates()
        return record.id


def blocks_text(message: dict[str, Any]) -> str:
    """Everything a message shows: its text and the text of its blocks."""
    parts = [str(message.get("text", ""))]
    for block in message.get("blocks") or []:
        if "text" in block:
            parts.append(block["text"]["text"])
        texts = [e.get("text", "") for e in block.get("elements", [])]
        parts += [t["text"] if isinstance(t, dict) else t for t in texts]  # buttons hold plain_text
    return "\n".join(parts)


@asynccontextmanager
async def open_harness(
    tmp_path: Path,
    api: FakeSlack,
    *,
    script: dict[str, Any] | None = None,
    clock: Clock | None = None,
    slack: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    arena: dict[str, Any] | None = None,
    formats: dict[str, dict[str, Any]] | None = None,
    latency: float = 0,
    resume: bool = True,
    storage: dict[str, Any] | None = None,
    results: dict[str, Any] | None = None,
) -> AsyncIterator[Harness]:
    """The app on a fresh Runtime. Opened again on the same `tmp_path`, it is the bot restarted on
    the same database (against the same Slack)."""
    config = make_config(
        tmp_path,
        resume=resume,
        model={"script": str(write_script(tmp_path, script or SCRIPT)), "latency": latency},
        # post_results adds a message to each thread: on only where a test looks for it
        # and the formats' own voting windows (Slack's longer default is tested where it matters)
        slack={
            "api_url": api.base_url,
            "edit_interval": 0,
            "post_results": False,
            "human_window": None,
            **(slack or {}),
        },
        # two arena rounds: one vote between them (none follows the last round); oxford keeps one
        limits={"user_cooldown": 0, "max_rounds": 2, **(limits or {})},
        formats={
            "arena": {"exchanges_per_round": 1, **(arena or {})},
            "oxford": {"max_rounds": 1},
            **(formats or {}),
        },
        storage=storage or {},
        results=results or {},
    )
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET)
    clock = clock or FakeClock()
    async with Runtime(config, clock=clock, secrets=secrets) as rt:
        app = create_app(rt)
        async with TestClient(TestServer(app.web_app())) as http:
            try:
                yield Harness(api, rt, app, http, clock)
            finally:
                await app.aclose()
