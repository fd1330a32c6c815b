"""Running whole debates in tests: real runtime, real SQLite file, real agno agents, scripted model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import Clock, FakeClock
from core.events import Event, TurnCompleted, VoteCast, VotingClosed
from core.ports import DebateRecord
from core.session import DebateHandle, DebateResult
from core.spec import DebateSpec
from tests.helpers import RecordingSink, make_config, write_script

TOPIC = "Should cities ban cars?"
E = TypeVar("E")

Hook = Callable[[Runtime, DebateHandle, Event], Awaitable[None] | None]


@dataclass
class Run:
    sink: RecordingSink
    result: DebateResult
    stored: list[Event]
    record: DebateRecord | None
    debate_id: str

    def of(self, kind: type[E]) -> list[E]:
        return self.sink.of(kind)

    def turns(self, role: str | None = None) -> list[TurnCompleted]:
        return [t for t in self.of(TurnCompleted) if role is None or t.role == role]

    def ai_votes(self, vote_id: str) -> list[VoteCast]:
        return [v for v in self.of(VoteCast) if v.vote_id == vote_id and not v.voter.human]

    def closed(self, vote_id: str) -> VotingClosed:
        return next(v for v in self.of(VotingClosed) if v.vote_id == vote_id)


async def run_debate(
    tmp_path: Path,
    *,
    script: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    seed: int = 1,
    topic: str = TOPIC,
    fmt: str = "arena",
    clock: Clock | None = None,
    hook: Hook | None = None,
    secrets: Secrets | None = None,
    **config: Any,
) -> Run:
    """Run one debate to the end and return what the sink saw and what the store holds."""
    if script is not None:
        path = write_script(tmp_path, script)
        config["model"] = {**config.get("model", {}), "script": str(path)}
    cfg = make_config(tmp_path, **config)
    sink = RecordingSink()
    async with Runtime(cfg, clock=clock or FakeClock(), secrets=secrets or Secrets()) as rt:
        handle = await rt.start_debate(
            DebateSpec(fmt, topic, {"humans": "off", **(options or {})} if fmt == "arena" else options or {}),
            sink,
            seed=seed,
        )
        if hook is not None:
            h = hook

            async def call(event: Event) -> None:
                outcome = h(rt, handle, event)
                if outcome is not None:
                    await outcome

            sink.hooks.append(call)
        result = await handle.wait()
        stored = await rt.store.events(handle.debate_id)
        record = await rt.store.get_debate(handle.debate_id)
    return Run(sink, result, stored, record, handle.debate_id)
