"""One persona in one role, speaking through an agno Agent: streamed turns and structured decisions.

agno reports model failures as a `RunErrorEvent` or a run with status `error` rather than raising;
this wrapper turns both into `ModelCallError` so the engine can retry or fall back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agno.agent import Agent
from agno.models.message import Message
from agno.run.agent import RunContentEvent, RunErrorEvent, RunOutput
from agno.run.base import RunStatus
from pydantic import BaseModel

from core.errors import ModelCallError, ModelOutage, StoreError
from core.llm.breaker import ModelBreaker
from core.llm.caching import cache_blocks, cacheable_prefix
from core.llm.memo import CallMemo
from core.models import TokenUsage
from core.observe import CallObserver, ModelCall, notify_call
from core.pricing import priced
from core.sanitize import well_formed, well_formed_text
from core.settings import ModelPrice

T = TypeVar("T", bound=BaseModel)

DeltaCallback = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class CallLabels:
    """What a model call is labelled with for metrics and traces."""

    debate_id: str = ""
    provider: str = ""
    model: str = ""
    role: str = ""
    kind: str = ""
    persona: str = ""
    cache_transcript: bool = False
    """Send the transcript as content blocks with a cache breakpoint (providers that honour it)."""


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
    """One persona in one role. With a memo, a call made before (a resumed debate) is not made again."""

    def __init__(
        self,
        agent: Agent,
        *,
        label: str,
        timeout: float,
        memo: CallMemo | None = None,
        key: str = "",
        model_name: str = "",
        price: ModelPrice | None = None,
        call: CallLabels | None = None,
        observers: Sequence[CallObserver] = (),
        breaker: ModelBreaker | None = None,
    ) -> None:
        self._agent = agent
        self._breaker = breaker or ModelBreaker(call.provider if call else "", limit=1_000_000)
        self.label = label
        self._timeout = timeout
        self._memo = memo
        self._key = key or label
        self.model_name = model_name
        self._price = price
        self._call = call or CallLabels(model=model_name)
        self._observers = observers

    def _report(
        self,
        started: float,
        *,
        first_token: float | None = None,
        usage: TokenUsage | None = None,
        error: str | None = None,
        prompt: str = "",
        reply: str = "",
    ) -> None:
        if not self._observers:
            return
        c = self._call
        system = self._agent.system_message if isinstance(self._agent.system_message, str) else ""
        notify_call(
            self._observers,
            ModelCall(
                debate_id=c.debate_id,
                provider=c.provider,
                model=c.model,
                role=c.role,
                kind=c.kind,
                persona=c.persona,
                started=started,
                ended=time.time(),
                first_token=first_token,
                usage=usage or TokenUsage(),
                error=error,
                prompt=prompt,
                reply=reply,
                prefix_tokens=cacheable_prefix(system, prompt),
            ),
        )

    def _input(self, prompt: str) -> str | Message:
        """The prompt as the model gets it: with the transcript in cacheable blocks where that pays."""
        blocks = cache_blocks(prompt) if self._call.cache_transcript else None
        return prompt if blocks is None else Message(role="user", content=blocks)

    def _priced(self, usage: TokenUsage) -> TokenUsage:
        return priced(usage, self.model_name, self._price)

    @property
    def agent(self) -> Agent:
        return self._agent

    @property
    def price(self) -> ModelPrice | None:
        """The price of this agent's model (None: not in the price table)."""
        return self._price

    def next_call_failed_before(self) -> bool:
        """Whether the next call is one that failed before the debate was resumed."""
        recalled = self._memo.peek(self._key) if self._memo is not None else None
        return recalled is not None and not recalled["ok"]

    def _recall(self) -> tuple[int, dict[str, Any] | None]:
        if self._memo is None:
            return 0, None
        n = self._memo.take_index(self._key)
        recalled = self._memo.recalled(self._key, n)
        if recalled is not None:
            skip = getattr(self._agent.model, "skip", None)
            if callable(skip):  # a scripted model keeps its place in the script
                skip()
        return n, recalled

    async def _remember(self, n: int, result: dict[str, Any]) -> None:
        if self._memo is not None:
            await self._memo.remember(self._key, n, result)

    async def speak(self, prompt: str, on_delta: DeltaCallback) -> SpokenTurn:
        """Stream a turn; `on_delta` gets each non-empty text chunk as it arrives (not when recalled)."""
        n, recalled = self._recall()
        if recalled is not None:
            if not recalled["ok"]:
                await self._breaker.failed(recalled["error"], live=False)
                raise ModelCallError(self.label, recalled["error"])
            await self._breaker.succeeded(live=False)
            return SpokenTurn(text=recalled["text"], usage=TokenUsage(**recalled["usage"]))
        while True:  # again only while the provider is down and nothing of this call was shown
            await self._breaker.admit()
            started = time.time()
            first: list[float] = []  # when the first words came
            try:
                turn = await self._speak_live(prompt, _timed(first, on_delta))
            except StoreError:  # a chunk could not be stored: the model did nothing wrong
                raise
            except Exception as exc:
                self._report(
                    started, first_token=first[0] if first else None, error=_reason(exc), prompt=prompt
                )
                if not await self._failed(n, exc, shown=bool(first)):
                    raise
                continue
            break
        await self._breaker.succeeded()
        self._report(
            started, first_token=first[0] if first else None, usage=turn.usage, prompt=prompt, reply=turn.text
        )
        await self._remember(n, {"ok": True, "text": turn.text, "usage": turn.usage.model_dump()})
        return turn

    async def _failed(self, n: int, exc: Exception, *, shown: bool = False) -> bool:
        """A live call failed: True when the provider is down and the call may be made again as it is
        (not remembered: only its last outcome is; not when part of it was `shown`); else the failure
        is remembered, for a replay, and the caller raises."""
        try:
            again = await self._breaker.failed(exc) and not shown
        except ModelOutage:
            await self._remember(n, {"ok": False, "error": _reason(exc)})
            raise
        if not again:
            await self._remember(n, {"ok": False, "error": _reason(exc)})
        return again

    async def decide(self, prompt: str, schema: type[T]) -> Decision[T]:
        """Ask for a structured reply (a vote, a ruling)."""
        n, recalled = self._recall()
        if recalled is not None:
            if not recalled["ok"]:
                await self._breaker.failed(recalled["error"], live=False)
                raise ModelCallError(self.label, recalled["error"])
            await self._breaker.succeeded(live=False)
            parsed = recalled["parsed"]
            value = schema.model_validate_json(parsed) if parsed is not None else None
            return Decision(value=value, raw=recalled["raw"], usage=TokenUsage(**recalled["usage"]))
        while True:  # again only while the provider is down
            await self._breaker.admit()
            started = time.time()
            try:
                decision = await self._decide_live(prompt, schema)
            except Exception as exc:
                self._report(started, error=_reason(exc), prompt=prompt)
                if not await self._failed(n, exc):
                    raise
                continue
            break
        await self._breaker.succeeded()
        self._report(started, usage=decision.usage, prompt=prompt, reply=decision.raw)
        parsed_json = decision.value.model_dump_json() if decision.value is not None else None
        await self._remember(
            n, {"ok": True, "raw": decision.raw, "parsed": parsed_json, "usage": decision.usage.model_dump()}
        )
        return decision

    async def _speak_live(self, prompt: str, on_delta: DeltaCallback) -> SpokenTurn:
        parts: list[str] = []
        final: RunOutput | None = None
        try:
            async with asyncio.timeout(self._timeout):
                stream = self._agent.arun(self._input(prompt), stream=True, yield_run_output=True)
                async for item in stream:
                    if isinstance(item, RunContentEvent):
                        if isinstance(item.content, str) and item.content:
                            chunk = well_formed_text(item.content)
                            parts.append(chunk)
                            await on_delta(chunk)
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
        usage = usage_of(final) if final is not None else TokenUsage()
        return SpokenTurn(text=text, usage=self._priced(usage))

    async def _decide_live(self, prompt: str, schema: type[T]) -> Decision[T]:
        try:
            async with asyncio.timeout(self._timeout):
                output: Any = await self._agent.arun(self._input(prompt), output_schema=schema)
        except TimeoutError:
            raise ModelCallError(self.label, f"no reply within {self._timeout:.0f} s") from None
        if not isinstance(output, RunOutput):
            raise ModelCallError(self.label, f"unexpected reply {type(output).__name__}")
        if output.status == RunStatus.error:
            raise ModelCallError(self.label, str(output.content or "model error"))
        usage = self._priced(usage_of(output))
        if isinstance(output.content, schema):
            value = well_formed(output.content)
            return Decision(value=value, raw=value.model_dump_json(), usage=usage)
        return Decision(value=None, raw=well_formed_text(str(output.content or "")), usage=usage)


def _timed(first: list[float], on_delta: DeltaCallback) -> DeltaCallback:
    """`on_delta`, noting in `first` when the first words came."""

    async def timed(delta: str) -> None:
        if not first:
            first.append(time.time())
        await on_delta(delta)

    return timed


def _reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, ModelCallError) else str(exc) or type(exc).__name__


async def consult(agent: PersonaAgent, prompt: str, schema: type[T]) -> Decision[T] | str:
    """A structured reply, or the reason it failed (formats decide what a failure counts as)."""
    try:
        return await agent.decide(prompt, schema)
    except (StoreError, ModelOutage):  # the store, not the model; or the model is down for good
        raise
    except Exception as exc:  # every failure is reported the same way: by its reason
        return _reason(exc)
