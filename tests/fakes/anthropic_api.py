"""A local fake of the Anthropic Messages API: streams SSE for turns, returns JSON for structured calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

USAGE = {
    "input_tokens": 120,
    "output_tokens": 9,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 100,
}


@dataclass
class Request:
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeAnthropic:
    turn_text: str = "Cars clog cities. Buses do not."
    vote_json: str = '{"vote": "keep", "reason": "Answered the point directly."}'
    structured: Callable[[dict[str, Any]], str] | None = None
    requests: list[Request] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    base_url: str = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(Request({k.lower(): v for k, v in request.headers.items()}, body))
        if not body.get("stream"):
            return web.json_response(
                {
                    "id": f"msg_{len(self.requests)}",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [
                        {"type": "text", "text": self.structured(body) if self.structured else self.vote_json}
                    ],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": USAGE,
                }
            )
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for name, data in self._sse(body["model"]):
            await response.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        await response.write_eof()
        return response

    def _sse(self, model: str) -> list[tuple[str, dict[str, Any]]]:
        start = {
            "id": "msg_s",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**USAGE, "output_tokens": 1},
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
        ]
        words = self.turn_text.split(" ")
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
                    "usage": {"output_tokens": USAGE["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return events
