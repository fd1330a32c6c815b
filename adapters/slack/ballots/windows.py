"""How long people have to vote in Slack: longer than the formats' defaults (Slack is read in
passing, not watched), said in words that fit the length."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from adapters.card_text import span as span  # said the same way on the opening card
from core.events import HumanVoteOpened

WINDOW_OPTION = "human_window"


def with_platform_window(
    options: Mapping[str, Any], *, takes_window: bool, seconds: int | None
) -> dict[str, Any]:
    """The request's options with Slack's default window, unless the request set one (or the format
    takes none, or no Slack default is configured)."""
    out = dict(options)
    if takes_window and seconds and WINDOW_OPTION not in out:
        out[WINDOW_OPTION] = seconds
    return out


def closes_at(window: HumanVoteOpened) -> str:
    """` · voting closes at 14:05` in each reader's own time zone (Slack's date token), or nothing
    when the window's start is unknown."""
    start = window.at.timestamp()
    if start <= 0:
        return ""
    end = start + window.window
    fallback = datetime.fromtimestamp(end, tz=UTC).strftime("%H:%M UTC")
    return f" · voting closes at <!date^{int(end)}^{{time}}|{fallback}>"


# --- the countdown ---------------------------------------------------------------------------------
# Slack has no self-updating relative time for the future, so the card says roughly how long is left
# and the sink edits it at a few points (docs/slack.md, "Countdown"): each minute while more than two
# minutes are left, every 30 s down to one minute, then every 15 s; none in the last 15 s (the
# VotingClosed card comes next). A 120 s window costs at most 5 countdown edits.

EARLY_WAKE = 0.5  # seconds a refresh may come early and still read as the next figure


def _step(left: float) -> int:
    """How fine the figure is with `left` seconds to go."""
    if left > 120:
        return 60
    if left > 60:
        return 30
    return 15


def _figure(left: float) -> int:
    """`left` rounded up to the current step (a card never promises less time than there is)."""
    step = _step(left)
    return step * max(1, math.ceil((left - EARLY_WAKE) / step))


def seconds_left(window: HumanVoteOpened, now: datetime) -> float:
    return window.window - (now - window.at).total_seconds()


def time_left(window: HumanVoteOpened, now: datetime | None) -> str:
    """` · about 2 min left` for the card at `now` (nothing when `now` or the start is unknown)."""
    if now is None or window.at.timestamp() <= 0:
        return ""
    left = seconds_left(window, now)
    if left <= 0:
        return " · closing now"
    return f" · about {span(_figure(min(left, window.window)))} left"


def next_refresh(left: float) -> float | None:
    """Seconds until the figure for `left` seconds changes, or None when no more edits are due
    (the window closes before the next figure would show)."""
    if left <= 0:
        return None
    after = _figure(left) - _step(left)
    if after <= 0:
        return None
    return max(0.0, left - after)


def countdown_edits(window: float) -> int:
    """How many countdown edits a window of `window` seconds costs at most (docs/slack.md)."""
    edits, left = 0, float(window)
    while (wait := next_refresh(left)) is not None:
        left -= wait
        edits += 1
    return edits
