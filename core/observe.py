"""Seams through which operations code (metrics, traces, budgets) watches the engine.

The engine only calls these small protocols; what watches (Prometheus, OpenTelemetry, the daily
spend ledger) is plugged in by the bot. Observers are called synchronously on the event loop and
must be cheap; one that raises is logged and never disturbs a debate.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from core.events import Event
from core.models import TokenUsage
from core.ports import EventSink

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DebateTags:
    """What every observation of a debate is labelled with."""

    debate_id: str
    format: str
    platform: str
    scope: str


class EventObserver(Protocol):
    def observe(self, event: Event, tags: DebateTags) -> None:
        """An event, after it was stored and before the front end sees it."""
        ...


@dataclass(frozen=True)
class ModelCall:
    """One finished model call (or one that failed): who, which model, how long, what it used.

    Times are wall-clock seconds since the epoch, so traces can place the call after the fact.
    """

    debate_id: str
    provider: str
    model: str
    role: str
    kind: str
    persona: str
    started: float
    ended: float
    first_token: float | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: str | None = None
    prompt: str = ""
    reply: str = ""
    prefix_tokens: int = 0
    """Estimated tokens of the stable prefix it sent (system prompt + transcript so far)."""

    @property
    def seconds(self) -> float:
        return max(0.0, self.ended - self.started)

    @property
    def time_to_first_token(self) -> float | None:
        return None if self.first_token is None else max(0.0, self.first_token - self.started)


class CallObserver(Protocol):
    def model_call(self, call: ModelCall) -> None: ...


class PlatformObserver(Protocol):
    """What the front ends report about their platform's API (requests, limits, lag)."""

    def request(self, platform: str, method: str, status: int, seconds: float) -> None:
        """One HTTP request to the platform's API and its status (429 counts as rate-limited)."""
        ...

    def retry(self, platform: str, method: str) -> None: ...

    def delivered(self, platform: str, event: Event, lag_seconds: float) -> None:
        """A debate's event reached the channel `lag_seconds` after it was stored."""
        ...


def notify_event(observers: Sequence[EventObserver], event: Event, tags: DebateTags) -> None:
    for observer in observers:
        try:
            observer.observe(event, tags)
        except Exception:
            log.exception("observer %s failed on %s", type(observer).__name__, event.kind)


def notify_call(observers: Sequence[CallObserver], call: ModelCall) -> None:
    for observer in observers:
        try:
            observer.model_call(call)
        except Exception:
            log.exception("observer %s failed on a model call", type(observer).__name__)


class ObservedSink:
    """A sink that shows each event to the observers, then passes it on."""

    def __init__(self, sink: EventSink, observers: Sequence[EventObserver], tags: DebateTags) -> None:
        self._sink = sink
        self._observers = observers
        self.tags = tags
        # a front end that reports when vote cards are visible keeps saying so through the wrapper
        self.reports_cards_shown = bool(getattr(sink, "reports_cards_shown", False))
        self.relayed_reaction = getattr(sink, "relayed_reaction", None)  # its cards' relayed reactions
        self.read_cards_again = getattr(sink, "read_cards_again", None)  # asked by another process
        self.read_card_at_close = getattr(sink, "read_card_at_close", None)  # a window's last look

    async def emit(self, event: Event) -> None:
        notify_event(self._observers, event, self.tags)
        await self._sink.emit(event)


class PlatformErrorObserver(Protocol):
    """What an observer may also count (optional: observers without these methods are skipped)."""

    def api_error(self, platform: str, method: str, error: str) -> None: ...

    def edit_skipped(self, platform: str) -> None: ...


class _Platforms:
    """The process's platform observers: front ends report here, the bot plugs observers in."""

    def __init__(self) -> None:
        self.observers: list[PlatformObserver] = []

    def request(self, platform: str, method: str, status: int, seconds: float) -> None:
        for o in self.observers:
            o.request(platform, method, status, seconds)

    def retry(self, platform: str, method: str) -> None:
        for o in self.observers:
            o.retry(platform, method)

    def delivered(self, platform: str, event: Event, lag_seconds: float) -> None:
        for o in self.observers:
            o.delivered(platform, event, lag_seconds)

    def api_error(self, platform: str, method: str, error: str) -> None:
        """A request the platform answered with an error code (Slack: `ok: false`, often HTTP 200);
        told to the observers that count them (`PlatformErrorObserver`)."""
        for o in self.observers:
            counted = getattr(o, "api_error", None)
            if counted is not None:
                counted(platform, method, error)

    def edit_skipped(self, platform: str) -> None:
        """An interim edit the rate windows held back (finals first); for `PlatformErrorObserver`s."""
        for o in self.observers:
            counted = getattr(o, "edit_skipped", None)
            if counted is not None:
                counted(platform)


platforms = _Platforms()
"""Where adapters report platform API requests, retries and delivery lag (no-op until observed)."""
