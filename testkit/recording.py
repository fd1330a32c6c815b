"""A sink that keeps every event it is given, for tests and benchmarks to look at afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from core.events import Event

E = TypeVar("E")


class RecordingSink:
    """Keeps every event it is given; `on` hooks let a test react (e.g. vote when a window opens)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.hooks: list[Callable[[Event], Any]] = []

    async def emit(self, event: Event) -> None:
        self.events.append(event)
        for hook in self.hooks:
            result = hook(event)
            if asyncio.iscoroutine(result):
                await result

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]
