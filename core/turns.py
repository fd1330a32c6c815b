"""Running spoken turns: retry once on failure, then fall back with a notice.

`run_turn` streams one turn as it is generated. `run_parallel_turns` asks several personas at
once (council proposals, panel answers) and emits each finished turn whole, in request order, so
front ends never see several streams interleaved in one thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.budget import BudgetExhausted, MeteredAgent
from core.errors import ModelCallError, ModelOutage, StoreError
from core.events import Notice, TurnCompleted, TurnDelta, TurnStarted
from core.formats.base import DebateContext, MeteredCall
from core.llm.agents import DeltaCallback, SpokenTurn
from core.llm.registry import CallKind
from core.models import Persona
from core.settings import ResearchSettings

log = logging.getLogger(__name__)

DELTA_MIN_CHARS = 24
"""A streamed piece is held until it has at least this many characters (or a line break)..."""
DELTA_INTERVAL = 0.5
"""...and, after the first piece of a turn, until this many seconds have passed since the last one."""
DELTA_MAX_CHARS = 400
"""A piece this long goes out whatever the time (a fast stream still arrives in bounded pieces)."""

Annotate = Callable[[str], dict[str, Any]]
"""Extra TurnCompleted fields computed from the final text (quotes checked, sources found)."""


class _DeltaBuffer:
    """Coalesces tiny model deltas into fewer TurnDelta events, by size and by time.

    Every TurnDelta is an event stored before any front end sees it, so a delta costs a write; and
    Discord and Slack show interim text by editing a message at most every second or so. The first
    piece of a turn goes out as soon as it has a few words (the message appears at once); after
    that, pieces go out at most every DELTA_INTERVAL seconds (on the clock the debate runs on),
    unless one grows past DELTA_MAX_CHARS. Whatever is held is flushed when the turn ends, before
    TurnCompleted, so front ends see the same text, in fewer, larger pieces.
    """

    def __init__(self, ctx: DebateContext, turn_id: str) -> None:
        self._ctx = ctx
        self._turn_id = turn_id
        self._pending = ""
        self._last: float | None = None  # when the last piece went out (None: none yet)

    async def add(self, text: str) -> None:
        self._pending += text
        if len(self._pending) < DELTA_MIN_CHARS and "\n" not in text:
            return
        last = self._last
        if (
            last is None
            or len(self._pending) >= DELTA_MAX_CHARS
            or self._ctx.clock.now() - last >= DELTA_INTERVAL
        ):
            await self.flush()

    async def flush(self) -> None:
        if self._pending:
            text, self._pending = self._pending, ""
            self._last = self._ctx.clock.now()
            await self._ctx.emit(TurnDelta(turn_id=self._turn_id, text=text))


def fallback_line(persona: Persona) -> str:
    return f"({persona.name} lost the thread for a moment and yields the floor.)"


def _reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, ModelCallError) else str(exc) or type(exc).__name__


async def _nothing(_: str) -> None:
    return None


@dataclass(frozen=True)
class TurnRequest:
    """One turn to speak: who, in which role, under which heading, with which prompt."""

    persona: Persona
    role: str
    round_no: int
    heading: str
    prompt: str
    system: str
    kind: CallKind = "turn"
    annotate: Annotate | None = None
    research: ResearchSettings | None = None


async def _emit_fallback(ctx: DebateContext, request: TurnRequest, turn_id: str, error: str) -> TurnCompleted:
    done = await ctx.emit(
        TurnCompleted(
            turn_id=turn_id,
            speaker=request.persona.ref(),
            role=request.role,
            round=request.round_no,
            text=fallback_line(request.persona),
            fallback=True,
        )
    )
    await ctx.emit(
        Notice(
            level="warning",
            code="turn_failed",
            message=f"{request.persona.name}'s turn failed twice ({error}); a fallback line stands in.",
        )
    )
    return done


def _completed(request: TurnRequest, turn_id: str, spoken: SpokenTurn) -> TurnCompleted:
    extra = request.annotate(spoken.text) if request.annotate is not None else {}
    return TurnCompleted(
        turn_id=turn_id,
        speaker=request.persona.ref(),
        role=request.role,
        round=request.round_no,
        text=spoken.text,
        usage=spoken.usage,
        **extra,
    )


def _call(request: TurnRequest) -> MeteredCall:
    return MeteredCall(
        request.persona, request.role, request.kind, request.system, request.prompt, request.research
    )


async def run_turn(
    ctx: DebateContext,
    persona: Persona,
    *,
    role: str,
    round_no: int,
    heading: str,
    prompt: str,
    system: str,
    kind: CallKind = "turn",
    turn_id: str | None = None,
    annotate: Annotate | None = None,
    research: ResearchSettings | None = None,
    closing: bool = False,
) -> TurnCompleted:
    """Speak one turn, streamed. A failed attempt is retried once (the retry replaces the partial).

    The turn's worst case is reserved first: when the token budget cannot cover it, BudgetExhausted
    is raised and nothing is shown. A `closing` turn may use the reserve set aside for it.
    """
    request = TurnRequest(persona, role, round_no, heading, prompt, system, kind, annotate, research)
    [agent] = ctx.metered_all([_call(request)], what=f"{persona.name}'s turn", closing=closing)
    turn_id = turn_id or ctx.next_turn_id()
    error = ""
    attempt = 0
    for _ in (1, 2):
        attempt += 1
        await ctx.emit(_started(request, turn_id, attempt))
        attempt = await _pass_abandoned_attempts(ctx, agent, request, turn_id, attempt)
        buffer = _DeltaBuffer(ctx, turn_id)
        try:
            spoken = await agent.speak(prompt, buffer.add)
        except (StoreError, BudgetExhausted, ModelOutage):  # not the model's fault; a call not made; down
            raise
        except Exception as exc:  # any model failure: the rule is retry once, then fall back
            error = _reason(exc)
            log.warning("debate %s: turn %s attempt %d failed: %s", ctx.debate_id, turn_id, attempt, error)
            continue
        await buffer.flush()
        return await ctx.emit(_completed(request, turn_id, spoken))
    return await _emit_fallback(ctx, request, turn_id, error)


async def _pass_abandoned_attempts(
    ctx: DebateContext, agent: MeteredAgent, request: TurnRequest, turn_id: str, attempt: int
) -> int:
    """In a resumed debate, skip the attempts a crash cut short; the attempt to speak now.

    The log shows an attempt that failed (its failure is remembered: it is retried as before) or one
    that a crash abandoned (started again after the restart, with no model call in between). Where
    the log ends inside this turn, it starts over live, so front ends replace the partial text.
    """
    replay = ctx.replay
    if replay is None:
        return attempt
    while replay.active and replay.restarts(turn_id) and not agent.next_call_failed_before():
        attempt += 1
        await ctx.emit(_started(request, turn_id, attempt))
    if replay.took_over_in_turn(turn_id) is not None:
        attempt += 1
        await ctx.emit(_started(request, turn_id, attempt))
    return attempt


def _started(request: TurnRequest, turn_id: str, attempt: int) -> TurnStarted:
    return TurnStarted(
        turn_id=turn_id,
        speaker=request.persona.ref(),
        role=request.role,
        round=request.round_no,
        heading=request.heading,
        attempt=attempt,
    )


async def _speak_quietly(agent: MeteredAgent, prompt: str, on_delta: DeltaCallback) -> SpokenTurn | str:
    """Two attempts without showing anything; the spoken turn, or the last error."""
    error = ""
    for _ in (1, 2):
        try:
            return await agent.speak(prompt, on_delta)
        except (StoreError, ModelOutage):
            raise
        except BudgetExhausted as exc:  # the retry no longer fits: the turn falls back
            return str(exc)
        except Exception as exc:  # retried once, then the caller falls back
            error = _reason(exc)
            log.warning("%s failed: %s", agent.label, error)
    return error


async def run_parallel_turns(ctx: DebateContext, requests: Sequence[TurnRequest]) -> list[TurnCompleted]:
    """Ask every persona at once; emit each turn whole, in request order, as soon as it can be.

    All the turns are reserved together first (BudgetExhausted when the budget cannot cover them all).
    """
    agents = ctx.metered_all([_call(r) for r in requests], what=f"{len(requests)} turns at once")
    base = len(ctx.state.turn_ids)
    turn_ids = [f"t{base + i + 1}" for i in range(len(requests))]
    done: list[TurnCompleted] = []
    async with asyncio.TaskGroup() as group:
        tasks = [
            group.create_task(_speak_quietly(a, r.prompt, _nothing))
            for a, r in zip(agents, requests, strict=True)
        ]
        for request, turn_id, task in zip(requests, turn_ids, tasks, strict=True):
            outcome = await task
            await ctx.emit(
                TurnStarted(
                    turn_id=turn_id,
                    speaker=request.persona.ref(),
                    role=request.role,
                    round=request.round_no,
                    heading=request.heading,
                )
            )
            if isinstance(outcome, str):
                done.append(await _emit_fallback(ctx, request, turn_id, outcome))
            else:
                done.append(await ctx.emit(_completed(request, turn_id, outcome)))
    return done
