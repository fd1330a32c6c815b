"""The `scripted` provider: a real agno Model that replies from a script or with seeded placeholders.

It is the offline rehearsal mode and the test double. A script (YAML) maps a role name,
`persona:<id>` or `persona:<id>:<role>` to a list of replies; the most specific key wins. Each list
is consumed in order and its last entry repeats. A role's list is shared by every persona in that
role, in call order.

A reply is one of:
- a string: a spoken turn (or, for a structured call, raw text that will probably not parse);
- a mapping: a structured reply (an arena vote is `{vote: keep|replace, reason: ...}`);
- `{say: "text", delay: 2.5}`: a spoken turn with extra latency (seconds, on the debate's clock);
- `{error: "message"}`: the call fails with that message.

Without a matching script entry it writes deterministic, clearly labelled placeholder text and
seeded structured replies, generated from the requested JSON schema.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agno.metrics import MessageMetrics
from agno.models.base import Model
from agno.models.message import Message
from agno.models.response import ModelResponse
from pydantic import BaseModel

from core.clock import Clock, RealClock
from core.llm.placeholders import placeholder_structured, placeholder_text
from core.llm.script import CONTROL_KEYS, Script, ScriptedFailure, ScriptItem, count_tokens

__all__ = ["Script", "ScriptItem", "ScriptedFailure", "ScriptedModel", "count_tokens"]


def _chunks(text: str, words_per_chunk: int = 3) -> list[str]:
    words = text.split(" ")
    return [
        " ".join(words[i : i + words_per_chunk]) + (" " if i + words_per_chunk < len(words) else "")
        for i in range(0, len(words), words_per_chunk)
    ] or [""]


@functools.lru_cache(maxsize=64)  # council builds a schema per debate: keep it bounded
def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def _schema_of(response_format: Any) -> dict[str, Any] | None:
    if response_format is None:
        return None
    if isinstance(response_format, type) and issubclass(response_format, BaseModel):
        return _model_schema(response_format)
    if isinstance(response_format, dict):
        inner = response_format.get("json_schema", {}).get("schema")
        if isinstance(inner, dict):
            return inner
        return {}
    return {}


@dataclass
class ScriptedModel(Model):
    """Replies for one persona in one role. Latency is spent on the debate's clock."""

    id: str = "scripted"
    name: str = "Scripted"
    provider: str = "Scripted"
    supports_native_structured_outputs: bool = True
    persona_id: str = "persona"
    persona_name: str = "Persona"
    role: str = "speaker"
    topic: str = ""
    script: Script | None = None
    seed: int = 0
    latency: float = 0.0
    paced_by_reader: ClassVar[bool] = False
    """Each chunk `latency` after the reader asks for it, so a reader's stall delays every later
    chunk: the earlier pacing, kept for comparison (`bench/capacity.py --pacing reader`)."""
    clock: Clock = field(default_factory=RealClock)
    calls: int = 0  # calls made (a count only: keeping every prompt cost memory per debate)
    max_tokens: int | None = None
    """Replies are cut to this many tokens, as a provider's `max_tokens` would cut them."""

    def _next_reply(self, messages: list[Message], response_format: Any) -> tuple[str, float]:
        self.calls += 1
        n = self.calls
        rng = random.Random(f"{self.seed}|{self.persona_id}|{self.role}|{n}")
        item = self.script.next(self.persona_id, self.role) if self.script is not None else None
        schema = _schema_of(response_format)
        delay = 0.0
        if isinstance(item, dict):
            if "error" in item:
                raise ScriptedFailure(str(item["error"]))
            delay = float(item.get("delay", 0.0))
            if "say" in item:
                return str(item["say"]), delay
            data = {k: v for k, v in item.items() if k not in CONTROL_KEYS}
            return json.dumps(data), delay
        if isinstance(item, str):
            return item, delay
        if schema is not None:
            return json.dumps(placeholder_structured(rng, schema, self.topic)), delay
        prompt = str(messages[-1].content or "") if messages else ""
        system = str(messages[0].content or "") if messages and messages[0].role == "system" else ""
        text = placeholder_text(
            rng, name=self.persona_name, role=self.role, topic=self.topic, prompt=prompt, system=system
        )
        return text, delay

    def skip(self) -> None:
        """A call answered from memory (a resumed debate): keep the script's place and the count."""
        self.calls += 1
        if self.script is not None:
            self.script.next(self.persona_id, self.role)

    @staticmethod
    def _usage(messages: list[Message], text: str) -> MessageMetrics:
        prompt = sum(count_tokens(str(m.content or "")) for m in messages)
        out = max(1, count_tokens(text))
        return MessageMetrics(input_tokens=prompt, output_tokens=out, total_tokens=prompt + out)

    def _capped(self, text: str) -> str:
        """`text` cut to `max_tokens`, as a real provider stops writing there (at a word's end)."""
        limit = self.max_tokens
        if limit is None or count_tokens(text) <= limit:
            return text
        ends = [m.end() for m in re.finditer(r"\S+", text)]
        low, high = 0, len(ends)  # the most words whose text still fits
        while low < high:
            mid = (low + high + 1) // 2
            if count_tokens(text[: ends[mid - 1]]) <= limit:
                low = mid
            else:
                high = mid - 1
        return text[: ends[low - 1]] if low else text[: max(1, limit)]

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise RuntimeError("the scripted model is async only: call Agent.arun")

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        raise RuntimeError("the scripted model is async only: call Agent.arun")

    async def ainvoke(
        self, messages: list[Message], assistant_message: Message, **kwargs: Any
    ) -> ModelResponse:
        text, delay = self._next_reply(messages, kwargs.get("response_format"))
        text = self._capped(text)
        await self.clock.sleep(delay + self.latency * len(_chunks(text)))
        return ModelResponse(role="assistant", content=text, response_usage=self._usage(messages, text))

    async def ainvoke_stream(
        self, messages: list[Message], assistant_message: Message, **kwargs: Any
    ) -> AsyncIterator[ModelResponse]:
        text, delay = self._next_reply(messages, kwargs.get("response_format"))
        text = self._capped(text)
        # Paced like a network stream: chunk k is due `delay + k * latency` after the call, whatever
        # the reader does meanwhile (a real server keeps sending; the bytes wait in the socket). A
        # reader that stalls (a store commit, a busy loop) gets the chunks that came due at once,
        # instead of pushing every later chunk back by its stall.
        due = self.clock.now() + delay
        if delay:
            await self.clock.sleep(due - self.clock.now())
        for piece in _chunks(text):
            if self.latency:
                due = (self.clock.now() if self.paced_by_reader else due) + self.latency
                await self.clock.sleep(due - self.clock.now())
            yield ModelResponse(role="assistant", content=piece)
        yield ModelResponse(response_usage=self._usage(messages, text))

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]
