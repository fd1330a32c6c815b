"""Whether each vote card got through, told to the debate: its people's window opens only once
people can see the card and its ballot. A card that did not get through is tried once more first,
ahead of anything else. The reports made before the debate's handle is known are told when it is."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from core.session import DebateHandle

CARD_RETRY_AFTER = 1.0
"""Seconds before a vote card that could not be posted is tried once more."""


class CardReports:
    def __init__(self) -> None:
        self._shown: dict[str, bool] = {}  # vote id → its card was shown (reported to the debate)
        self._handle: DebateHandle | None = None

    def attach(self, handle: DebateHandle) -> None:
        self._handle = handle
        for vote_id, shown in self._shown.items():
            handle.vote_card_shown(vote_id, shown)

    def shown_before(self, vote_id: str) -> None:
        """The card was up before a restart."""
        self._shown[vote_id] = True

    async def report(
        self,
        vote_id: str,
        *,
        is_up: Callable[[], bool],
        post_again: Callable[[], Awaitable[None]] | None,
    ) -> None:
        """Tell the debate whether the card is up, posting it once more first if it is not
        (`post_again`: None when nothing can be posted any more)."""
        if not is_up() and post_again is not None:
            await asyncio.sleep(CARD_RETRY_AFTER)
            await post_again()
        shown = self._shown[vote_id] = is_up()
        if self._handle is not None:
            self._handle.vote_card_shown(vote_id, shown)
