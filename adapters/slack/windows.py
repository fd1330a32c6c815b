"""How long people have to vote in Slack: longer than the formats' defaults (Slack is read in
passing, not watched), said in words that fit the length."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

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


def span(seconds: int) -> str:
    """`30 s`, `90 s`, `2 min`, `2 min 30 s`: seconds up to two minutes, then minutes."""
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 2:
        return f"{int(seconds)} s"
    return f"{minutes} min" + (f" {rest} s" if rest else "")


def closes_at(window: HumanVoteOpened) -> str:
    """` · voting closes at 14:05` in each reader's own time zone (Slack's date token), or nothing
    when the window's start is unknown."""
    start = window.at.timestamp()
    if start <= 0:
        return ""
    end = start + window.window
    fallback = datetime.fromtimestamp(end, tz=UTC).strftime("%H:%M UTC")
    return f" · voting closes at <!date^{int(end)}^{{time}}|{fallback}>"
