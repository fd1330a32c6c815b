"""The small protocols through which the core talks outward: sinks and the store."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from core.events import Event

DebateStatus = Literal["running", "completed", "stopped", "interrupted", "failed"]


class EventSink(Protocol):
    """Where a debate's events go once stored (a front end, a test recorder)."""

    async def emit(self, event: Event) -> None: ...


class Binding(BaseModel):
    """Where a debate lives on a platform, so it can be found (one per channel) and resumed."""

    model_config = ConfigDict(frozen=True)

    platform: str = "terminal"
    scope: str = ""
    channel: str = ""
    started_by: str = ""


class DebateRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    format: str
    topic: str
    spec: dict[str, Any]
    status: DebateStatus
    reason: str = ""
    binding: Binding = Field(default_factory=Binding)
    created_at: datetime
    updated_at: datetime


class Store(Protocol):
    """An append-only event log per debate plus a table of debates."""

    async def create_debate(self, record: DebateRecord) -> None: ...

    async def append(self, event: Event) -> None:
        """Store one event; its `seq` must follow the last stored one without a gap."""
        ...

    async def events(self, debate_id: str) -> list[Event]: ...

    async def get_debate(self, debate_id: str) -> DebateRecord | None: ...

    async def list_debates(self, limit: int = 20) -> Sequence[DebateRecord]: ...

    async def debates_with_status(self, status: DebateStatus) -> Sequence[DebateRecord]: ...

    async def set_status(self, debate_id: str, status: DebateStatus, reason: str = "") -> None: ...

    async def set_binding_value(self, debate_id: str, key: str, value: str) -> None:
        """Remember a front end's delivery detail (message ids and the like)."""
        ...

    async def binding_values(self, debate_id: str) -> dict[str, str]: ...

    async def record_call(self, debate_id: str, key: str, n: int, payload: str) -> None:
        """Remember the result of a debate's n-th model call under `key` (for replay on resume)."""
        ...

    async def calls(self, debate_id: str) -> dict[tuple[str, int], str]: ...

    async def close(self) -> None: ...
