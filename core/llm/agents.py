"""One persona in one role, speaking through an agno Agent: streamed turns and structured decisions.

agno reports model failures as a `RunErrorEvent` or a run with status `error` rather than raising;
this wrapper turns both into `ModelCallError` so the engine can retry or fall back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agno.agent import Agent
from agno.run.agent import RunContentEvent, RunErrorEvent, RunOutput
from agno.run.base import RunStatus
from pydantic import BaseModel

from core.errors import ModelCallError
from core.models import TokenUsage

T = TypeVar("T", bound=BaseModel)

DeltaCallback = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class SpokenTurn:
    text: str
    usage: TokenUsage


@dataclass(frozen=True)
class Decision(Generic[T]):
    """A structured reply: `value` is None when the model's output did not fit the schema."""

    value: T | None
    raw: str
    usage: TokenUsage


def usage_of(output: RunOutput) -> TokenUsage:
    m = output.metrics
    if m is None:
        return TokenUsage()
    return TokenUsage(
        input_tokens=int(m.input_tokens or 0),
        output_tokens=int(m.output_tokens or 0),
        cache_read_tokens=int(m.cache_read_tokens or 0),
        cache_write_tokens=int(m.cache_write_tokens or 0),
    )


class PersonaAgent:
    def __init__(self, agent: Agent, *, label: str, timeout: float) -> None:
        self._agent = agent
        self.label = label
        self._timeout = timeout

    @property
    def agent(self) -> Agent:
        return self._agent

    async def speak(self, prompt: str, on_delta: DeltaCallback) -> SpokenTurn:
        """Stream a turn; `on_delta` gets each non-empty text chunk as it arrives."""
        parts: list[str] = []
        final: RunOutput | None = None
        try:
            async with asyncio.timeout(self._timeout):
                stream = self._agent.arun(prompt, stream=True, yield_run_output=True)
                async for item in stream:
                    if isinstance(item, RunContentEvent):
                        if isinstance(item.content, str) and item.content:
                            parts.append(item.content)
                            await on_delta(item.content)
                    elif isinstance(item, RunErrorEvent):
                        raise ModelCallError(self.label, str(item.content or "model error"))
                    elif isinstance(item, RunOutput):
                        final = item
        except TimeoutError:
            raise ModelCallError(self.label, f"no reply within {self._timeout:.0f} s") from None
        if final is not None and final.status == RunStatus.error:
            raise ModelCallError(self.label, str(final.content or "model error"))
        text = "".join(parts).strip()
        if not text:
            raise ModelCallError(self.label, "the model returned no text")
        return SpokenTurn(text=text, usage=usage_of(final) if final is not None else TokenUsage())

    async def decide(self, prompt: str, schema: type[T]) -> Decision[T]:
        """Ask for a structured reply (a vote, a ruling)."""
        try:
            async with asyncio.timeout(self._timeout):
                output: Any = await self._agent.arun(prompt, output_schema=schema)
        except TimeoutError:
            raise ModelCallError(self.label, f"no reply within {self._timeout:.0f} s") from None
        if not isinstance(output, RunOutput):
            raise ModelCallError(self.label, f"unexpected reply {type(output).__name__}")
        if output.status == RunStatus.error:
            raise ModelCallError(self.label, str(output.content or "model error"))
        usage = usage_of(output)
        if isinstance(output.content, schema):
            return Decision(value=output.content, raw=output.content.model_dump_json(), usage=usage)
        return Decision(value=None, raw=str(output.content or ""), usage=usage)
