"""Running one spoken turn: stream it out, retry once on failure, then fall back with a notice."""

from __future__ import annotations

import logging

from core.errors import ModelCallError
from core.events import Notice, TurnCompleted, TurnDelta, TurnStarted
from core.formats.base import DebateContext
from core.llm.registry import CallKind
from core.models import Persona

log = logging.getLogger(__name__)

DELTA_MIN_CHARS = 24


class _DeltaBuffer:
    """Coalesces tiny model deltas into fewer TurnDelta events (fewer rows, fewer edits)."""

    def __init__(self, ctx: DebateContext, turn_id: str) -> None:
        self._ctx = ctx
        self._turn_id = turn_id
        self._pending = ""

    async def add(self, text: str) -> None:
        self._pending += text
        if len(self._pending) >= DELTA_MIN_CHARS or "\n" in text:
            await self.flush()

    async def flush(self) -> None:
        if self._pending:
            text, self._pending = self._pending, ""
            await self._ctx.emit(TurnDelta(turn_id=self._turn_id, text=text))


def fallback_line(persona: Persona) -> str:
    return f"({persona.name} lost the thread for a moment and yields the floor.)"


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
) -> TurnCompleted:
    """Speak one turn. A failed attempt is retried once (the retry replaces any partial text)."""
    turn_id = turn_id or ctx.next_turn_id()
    agent = ctx.models.agent(persona, role, kind, system)
    speaker = persona.ref()
    error = ""
    for attempt in (1, 2):
        await ctx.emit(
            TurnStarted(
                turn_id=turn_id,
                speaker=speaker,
                role=role,
                round=round_no,
                heading=heading,
                attempt=attempt,
            )
        )
        buffer = _DeltaBuffer(ctx, turn_id)
        try:
            spoken = await agent.speak(prompt, buffer.add)
        except Exception as exc:  # any model failure: the rule is retry once, then fall back
            error = exc.reason if isinstance(exc, ModelCallError) else str(exc) or type(exc).__name__
            log.warning("debate %s: turn %s attempt %d failed: %s", ctx.debate_id, turn_id, attempt, error)
            continue
        await buffer.flush()
        return await ctx.emit(
            TurnCompleted(
                turn_id=turn_id,
                speaker=speaker,
                role=role,
                round=round_no,
                text=spoken.text,
                usage=spoken.usage,
            )
        )
    done = await ctx.emit(
        TurnCompleted(
            turn_id=turn_id,
            speaker=speaker,
            role=role,
            round=round_no,
            text=fallback_line(persona),
            fallback=True,
        )
    )
    await ctx.emit(
        Notice(
            level="warning",
            code="turn_failed",
            message=f"{persona.name}'s turn failed twice ({error}); a fallback line stands in.",
        )
    )
    return done
