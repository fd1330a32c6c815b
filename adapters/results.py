"""A debate's result in a line (pure): who won or what was decided, and one line of the summary.

Both front ends post it to the channel a debate started from when it ends, and show it on the card.
Built from the event log (or event by event): the final verdicts (oxford's judge and audience,
council's decision), else the last vote's outcome (arena), else nothing but how it ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

from core.events import DebateCompleted, DebateStarted, Event, Verdict, VotingClosed

SUMMARY_LIMIT = 200

ENDINGS = {
    "completed": "the debate ran its course",
    "time_up": "time ran out",
    "max_rounds": "all rounds were played",
    "budget": "its budget was spent",
    "stopped": "stopped",
    "failed": "it hit an error",
    "interrupted": "the bot shut down mid-debate",
}
"""How a debate ended (`DebateCompleted.reason`), in words, on every front end."""


def ending_text(done: DebateCompleted) -> str:
    """How the debate ended, in words: the engine's own account, else its reason's."""
    return done.detail or ENDINGS.get(done.reason, done.reason.replace("_", " "))


_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.S)


@dataclass(frozen=True)
class DebateResult:
    topic: str
    decision: str | None  # "Verdict: The proposer wins (…)", "Last vote: Ada keeps the floor"
    summary: str  # one line
    ending: str  # how it ended ("all rounds were played", "stopped by …")
    completed: bool  # ran its course (not stopped or failed)


def first_line(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """The first sentence of `text`, on one line, at most `limit` characters."""
    flat = " ".join(text.split())
    match = _SENTENCE.match(flat)
    line = match.group(1) if match else flat
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


class ResultTracker:
    """Follows a debate's events and says its result once it has ended."""

    def __init__(self) -> None:
        self.topic = ""
        self._verdicts: list[Verdict] = []
        self._last_vote: VotingClosed | None = None
        self._completed: DebateCompleted | None = None

    def see(self, event: Event) -> None:
        if isinstance(event, DebateStarted):
            self.topic = event.topic
        elif isinstance(event, Verdict) and event.final:
            self._verdicts.append(event)
        elif isinstance(event, VotingClosed):
            self._last_vote = event
        elif isinstance(event, DebateCompleted):
            self._completed = event

    @property
    def decision(self) -> str | None:
        if self._verdicts:
            return " · ".join(f"{v.title}: {v.winner_label}" for v in self._verdicts)
        if self._last_vote is not None and self._last_vote.decision != "none":
            return f"Last vote: {self._last_vote.decision_label}"
        return None

    def result(self) -> DebateResult | None:
        """None while the debate runs."""
        done = self._completed
        if done is None:
            return None
        summary = done.summary or (self._verdicts[-1].reasoning if self._verdicts else "")
        return DebateResult(
            topic=self.topic,
            decision=self.decision if done.reason not in ("failed",) else None,
            summary=first_line(summary) if summary else "",
            ending=ending_text(done),
            completed=done.reason not in ("stopped", "failed", "interrupted"),
        )


def result_of(events: Iterable[Event]) -> DebateResult | None:
    tracker = ResultTracker()
    for event in events:
        tracker.see(event)
    return tracker.result()


def result_message(
    result: DebateResult, *, head: str, italic: Callable[[str], str], escape: Callable[[str], str], link: str
) -> str:
    """What the channel is told when a debate ends: `head` (🏁 and the topic, in the platform's
    markup), how it ended unless it ran its course, the decision, one line of summary, `link` to
    the thread."""
    if not result.completed:
        head += f" ({escape(result.ending)})"
    lines = [head]
    if result.decision:
        lines.append(f"🏆 {escape(result.decision)}")
    if result.summary:
        lines.append(italic(escape(result.summary)))
    lines.append(link)
    return "\n".join(lines)


class Announcements:
    """The result posts under way, each a task of its own: waited for at the end, or cancelled."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, post: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(post, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait(self) -> None:
        """Until every result due has been posted."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
