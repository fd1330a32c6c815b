"""A local fake of the Anthropic Messages API: streams SSE for turns, returns JSON for structured calls.

It keeps a prompt cache the way the documentation describes it: a `cache_control` breakpoint
caches the prefix up to its block (tools, then system, then messages) when that prefix is at least
the model's minimum cacheable length; a later request reads the longest cached prefix it repeats
exactly, looking back at most 20 blocks from each breakpoint; more than 4 breakpoints is a 400.
Tokens are estimated at 4 characters each. Usage reports `input_tokens` (uncached),
`cache_creation_input_tokens` and `cache_read_input_tokens` accordingly.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from testkit.server import FakeServer

CHARS_PER_TOKEN = 4
MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
MIN_CACHEABLE = {
    "claude-sonnet-5-5": 1024,
    "claude-sonnet-5": 1024,
    "claude-opus-5": 512,
    "claude-haiku-5-5": 4096,
    "claude-sonnet-4-5": 1024,
    "claude-haiku-4-5": 4096,
}


def tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


@dataclass(frozen=True)
class Block:
    where: str
    text: str
    breakpoint: bool


def blocks_of(body: dict[str, Any]) -> list[Block]:
    """Every cacheable block of a request, in the order the cache sees them."""
    found: list[Block] = []
    for tool in body.get("tools") or []:
        found.append(Block("tool", json.dumps(tool, sort_keys=True), "cache_control" in tool))
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system:
        found.append(Block("system", block.get("text", ""), "cache_control" in block))
    for message in body.get("messages", []):
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content:
            text = block.get("text", json.dumps(block, sort_keys=True))
            found.append(Block(message["role"], text, "cache_control" in block))
    return found


@dataclass
class Request:
    headers: dict[str, str]
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)  # when it came in


@dataclass
class CacheReport:
    total: int
    read: int
    written: int
    breakpoints: list[int]
    """Estimated tokens of the prefix up to each breakpoint, in order."""


@dataclass
class PromptCache:
    entries: set[str] = field(default_factory=set)

    @staticmethod
    def _key(model: str, blocks: list[Block]) -> str:
        digest = hashlib.sha256(model.encode())
        for b in blocks:
            digest.update(f"\x00{b.where}\x00{b.text}".encode())
        return digest.hexdigest()

    def account(self, model: str, blocks: list[Block]) -> CacheReport:
        cumulative: list[int] = []
        running = 0
        for b in blocks:
            running += tokens(b.text)
            cumulative.append(running)
        marks = [i for i, b in enumerate(blocks) if b.breakpoint]
        minimum = MIN_CACHEABLE.get(model, 1024)
        read = 0
        for mark in marks:
            for j in range(mark, max(-1, mark - LOOKBACK_BLOCKS), -1):
                if self._key(model, blocks[: j + 1]) in self.entries:
                    read = max(read, cumulative[j])
                    break
        written_to = read
        for mark in marks:
            if cumulative[mark] >= minimum:
                self.entries.add(self._key(model, blocks[: mark + 1]))
                written_to = max(written_to, cumulative[mark])
        return CacheReport(running, read, written_to - read, [cumulative[m] for m in marks])


@dataclass
class FakeAnthropic(FakeServer[Request]):
    turn_text: str | Callable[[int], str] = "Cars clog cities. Buses do not."
    vote_json: str = '{"vote": "keep", "reason": "Answered the point directly."}'
    structured: Callable[[dict[str, Any]], str] | None = None
    thinking: float = 0.0  # seconds before each answer starts, as a real model takes
    reports: list[CacheReport] = field(default_factory=list)
    cache: PromptCache = field(default_factory=PromptCache)

    def __post_init__(self) -> None:
        super().__init__()
        self.app.router.add_post("/v1/messages", self._messages)

    @property
    def base_url(self) -> str:
        return self.root

    def usage(self, body: dict[str, Any], reply: str) -> dict[str, int]:
        report = self.cache.account(body["model"], blocks_of(body))
        self.reports.append(report)
        return {
            "input_tokens": report.total - report.read - report.written,
            "output_tokens": max(1, tokens(reply)),
            "cache_creation_input_tokens": report.written,
            "cache_read_input_tokens": report.read,
        }

    def text_for(self, n: int) -> str:
        return self.turn_text(n) if callable(self.turn_text) else self.turn_text

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        call = self.record(Request({k.lower(): v for k, v in request.headers.items()}, body))
        fault = self.fault_for(call)
        if fault is not None:  # an outage or an error on demand (`add_fault`, e.g. 529 overloaded)
            return web.json_response(fault.body, status=fault.status, headers=fault.headers)
        if self.thinking:
            await asyncio.sleep(self.thinking)
        marks = sum(b.breakpoint for b in blocks_of(body))
        if marks > MAX_BREAKPOINTS:
            return web.json_response(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be"
                        f" provided. Found {marks}.",
                    },
                },
                status=400,
            )
        if not body.get("stream"):
            reply = self.structured(body) if self.structured else self.vote_json
            return web.json_response(
                {
                    "id": f"msg_{len(self.requests)}",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [{"type": "text", "text": reply}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": self.usage(body, reply),
                }
            )
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        text = self.text_for(len(self.requests))
        for name, data in self._sse(body["model"], text, self.usage(body, text)):
            await response.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        await response.write_eof()
        return response

    def _sse(self, model: str, text: str, usage: dict[str, int]) -> list[tuple[str, dict[str, Any]]]:
        start: dict[str, Any] = {
            "id": "msg_s",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
        ]
        words = text.split(" ")
        for i, word in enumerate(words):
            piece = word + (" " if i < len(words) - 1 else "")
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
            )
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return events
