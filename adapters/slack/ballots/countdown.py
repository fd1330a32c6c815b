"""The "about … left" on open vote cards: one ticker per open window, asking for a redraw each time
the figure changes (`windows.next_refresh`). Time is the given clock, from when the window opened."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import datetime, timedelta

from adapters.slack.ballots.windows import next_refresh
from core.clock import Clock
from core.events import HumanVoteOpened


class Countdowns:
    def __init__(self, clock: Clock, redraw: Callable[[str, datetime], None]) -> None:
        """`redraw(vote id, now)`: queue the card's redraw for that moment."""
        self._clock = clock
        self._redraw = redraw
        self._tickers: dict[str, asyncio.Task[None]] = {}  # vote id → its card's ticker

    def __contains__(self, vote_id: str) -> bool:
        return vote_id in self._tickers

    async def start(self, window: HumanVoteOpened, name: str) -> None:
        """Count down while the window is open (a reopened window after a restart replaces the
        earlier ticker)."""
        await self.stop(window.vote_id)
        if window.at.timestamp() <= 0:
            return
        self._tickers[window.vote_id] = asyncio.create_task(self._count_down(window), name=name)

    async def _count_down(self, window: HumanVoteOpened) -> None:
        began = self._clock.now()
        while (wait := next_refresh(window.window - (self._clock.now() - began))) is not None:
            await self._clock.sleep(wait)
            elapsed = self._clock.now() - began
            self._redraw(window.vote_id, window.at + timedelta(seconds=elapsed))

    async def stop(self, vote_id: str) -> None:
        ticker = self._tickers.pop(vote_id, None)
        if ticker is not None and not ticker.done():
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker

    async def stop_all(self) -> None:
        for vote_id in list(self._tickers):
            await self.stop(vote_id)

    def cancel_all(self) -> None:
        for ticker in self._tickers.values():
            ticker.cancel()
