"""Every model call a debate makes, remembered, so a resumed debate replays without calling again.

Calls are keyed by who asked in which role for what (persona, role, kind) and counted per key in
the order they were made; a format asks in a fixed order, so the n-th call under a key is the same
call on replay. Failures are remembered too, so a replay takes the same retries and fallbacks.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

Record = Callable[[str, int, str], Awaitable[None]]


class CallMemo:
    def __init__(
        self, recorded: dict[tuple[str, int], str] | None = None, record: Record | None = None
    ) -> None:
        self._recorded = dict(recorded or {})
        self._record = record
        self._counts: dict[str, int] = {}

    def take_index(self, key: str) -> int:
        """The number of this call under `key` (0, 1, 2, ...)."""
        n = self._counts.get(key, 0)
        self._counts[key] = n + 1
        return n

    def peek(self, key: str) -> dict[str, Any] | None:
        """What the next call under `key` would be answered with, without taking it."""
        return self.recalled(key, self._counts.get(key, 0))

    def recalled(self, key: str, n: int) -> dict[str, Any] | None:
        payload = self._recorded.get((key, n))
        return json.loads(payload) if payload is not None else None

    def set_recorder(self, record: Record) -> None:
        self._record = record

    async def remember(self, key: str, n: int, result: dict[str, Any]) -> None:
        """Store the call's result before it is used; a store that stays down stops the debate.

        Not remembering would make a resumed debate ask the model again and diverge from its log.
        """
        payload = json.dumps(result)
        self._recorded[(key, n)] = payload
        if self._record is not None:
            await self._record(key, n, payload)
