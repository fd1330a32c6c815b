"""A Slack vote card counts down while people may vote: Slack has no self-updating relative time
for the future, so the sink edits the card at a few points (adapters/slack/ballots/windows.py), as interim
edits, and stops when the window closes or the debate ends."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.ballots.windows import countdown_edits, next_refresh, time_left
from adapters.slack.delivery.rates import rates_of
from adapters.slack.render.events import SlackView
from adapters.slack.render.ops import Update
from core.events import HumanVoteOpened, VotingClosed, VotingStarted
from core.models import VoteOption
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock, SteppedClock
from tests.adapters.slack.conftest import Harness, blocks_text, open_harness
from tests.adapters.slack.test_resume import TIE

KEEP = VoteOption(key="keep", label="Keep", emoji="✅")
REPLACE = VoteOption(key="replace", label="Replace", emoji="❌")
OPENED_AT = datetime(2026, 11, 24, 14, 3, tzinfo=UTC)
LEFT = re.compile(r"about (\d+) (s|min) left")


def seconds_shown(text: str) -> int | None:
    found = LEFT.search(text)
    if found is None:
        return None
    return int(found.group(1)) * (60 if found.group(2) == "min" else 1)


# --- pure rendering ------------------------------------------------------------------------------


def _open_view(window: float = 120) -> SlackView:
    view = SlackView(streaming=True, limit=3000)
    view.render(VotingStarted(vote_id="v1", title="Keep Ada?", options=(KEEP, REPLACE), humans="vote"))
    view.render(
        HumanVoteOpened(vote_id="v1", options=(KEEP, REPLACE), window=window, reason="vote", at=OPENED_AT)
    )
    return view


def _card_text(op: Update | None) -> str:
    assert op is not None
    return "\n".join([op.text, *(str(b) for b in op.blocks)])


def test_the_card_is_drawn_for_the_time_it_is_given() -> None:
    view = _open_view()
    first = view.countdown("v1", OPENED_AT)
    later = view.countdown("v1", OPENED_AT + timedelta(seconds=30))
    last = view.countdown("v1", OPENED_AT + timedelta(seconds=110))
    assert "voting closes at <!date^" in _card_text(first)
    assert "about 2 min left" in _card_text(first)
    assert "about 90 s left" in _card_text(later)
    assert "about 15 s left" in _card_text(last)
    assert first is not None and first.interim  # the budget may coalesce or skip it
    assert view.countdown("v1", OPENED_AT + timedelta(seconds=30)) == later  # pure: same time, same card


def test_no_countdown_once_the_window_has_closed() -> None:
    view = _open_view()
    view.render(
        VotingClosed(vote_id="v1", tally={}, human_tally={"keep": 1}, decision="keep", decision_label="Kept")
    )
    assert view.countdown("v1", OPENED_AT + timedelta(seconds=30)) is None
    assert view.countdown("nope", OPENED_AT) is None


def test_the_opened_card_says_the_whole_window_is_left() -> None:
    view = SlackView(streaming=True, limit=3000)
    view.render(VotingStarted(vote_id="v1", title="Keep Ada?", options=(KEEP, REPLACE), humans="vote"))
    (opened,) = view.render(
        HumanVoteOpened(vote_id="v1", options=(KEEP, REPLACE), window=300, reason="vote", at=OPENED_AT)
    )
    assert isinstance(opened, Update)
    assert "about 5 min left" in _card_text(opened)


@pytest.mark.parametrize(
    ("left", "words"),
    [(300, "5 min"), (150, "3 min"), (120, "2 min"), (100, "2 min"), (90, "90 s"), (60, "60 s"),
     (44, "45 s"), (15, "15 s"), (3, "15 s")],
)  # fmt: skip
def test_the_figure_never_promises_less_time_than_there_is(left: int, words: str) -> None:
    window = HumanVoteOpened(vote_id="v", options=(KEEP,), window=600, reason="vote", at=OPENED_AT)
    now = OPENED_AT + timedelta(seconds=600 - left)
    assert time_left(window, now) == f" · about {words} left"


def test_the_refresh_points_and_their_cost() -> None:
    left, points = 120.0, []
    while (wait := next_refresh(left)) is not None:
        left -= wait
        points.append(left)
    assert points == [90, 60, 45, 30, 15]  # none in the last 15 s: the closed card comes next
    assert countdown_edits(120) == 5
    assert countdown_edits(30) == 1
    assert countdown_edits(600) == 13


# --- through the app -----------------------------------------------------------------------------


SLACK_WINDOW = {"human_window": 120}


def _card(slack: Harness) -> dict[str, Any] | None:
    cards = [m for m in slack.thread() if m["text"].startswith("Vote: ")]
    return cards[0] if cards else None


def _card_updates(slack: Harness, api: FakeSlack) -> list[str]:
    card = _card(slack)
    assert card is not None
    posted = [blocks_text(m) for m in api.posted if m.get("ts") == card["ts"]]  # it may be posted open
    return posted + [
        blocks_text(c.args) if "blocks" in c.args else str(c.args.get("text"))
        for c in api.calls_to("chat.update")
        if c.args.get("ts") == card["ts"]
    ]


async def _open_tie_window(slack: Harness, api: FakeSlack) -> None:
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()

    def shown() -> str:
        card = _card(slack)
        return blocks_text(card) if card else ""

    await api.wait_until(lambda: "It's a tie" in shown() and "about 2 min left" in shown())


async def test_the_card_counts_down_until_the_window_closes(tmp_path: Path, api: FakeSlack) -> None:
    clock, ticks = HeldClock(hold=5), SteppedClock()
    async with open_harness(tmp_path, api, script=TIE, clock=clock, slack=SLACK_WINDOW) as slack:
        slack.app.front.countdown_clock = ticks
        await _open_tie_window(slack, api)

        def figure() -> int | None:
            card = _card(slack)
            return seconds_shown(blocks_text(card)) if card else None

        for step, expected in [(30, 90), (30, 60), (15, 45), (15, 30), (15, 15)]:
            await ticks.wait_for_sleepers()
            await ticks.advance(step)
            await api.wait_until(lambda expected=expected: figure() == expected)  # type: ignore[misc]

        await clock.release()  # the window closes
        await api.wait_until(lambda: "Voting is closed." in blocks_text(_card(slack) or {"text": ""}))
        await slack.settle()
        assert ticks.sleepers == 0  # the ticker is gone
        updates = _card_updates(slack, api)
        figures = [f for f in map(seconds_shown, updates) if f is not None]
        # the opened card, then one edit per refresh point (windows.countdown_edits)
        assert figures == [120, 90, 60, 45, 30, 15]
        assert len(figures) - 1 <= countdown_edits(120)
        assert "left" not in updates[-1]


async def test_no_countdown_edit_after_the_window_closed(tmp_path: Path, api: FakeSlack) -> None:
    clock, ticks = HeldClock(hold=5), SteppedClock()
    async with open_harness(tmp_path, api, script=TIE, clock=clock, slack=SLACK_WINDOW) as slack:
        slack.app.front.countdown_clock = ticks
        await _open_tie_window(slack, api)
        await ticks.wait_for_sleepers()
        await clock.release()  # the window closes before the first refresh is due
        await api.wait_until(lambda: "Voting is closed." in blocks_text(_card(slack) or {"text": ""}))
        await slack.settle()
        closed_at = len(_card_updates(slack, api))
        assert ticks.sleepers == 0  # cancelled with the window
        await ticks.advance(120)  # the time any stray ticker would have refreshed in
        await slack.settle()
        updates = _card_updates(slack, api)
        assert len(updates) == closed_at
        assert "Voting is closed." in updates[-1] and "left" not in updates[-1]


async def test_no_countdown_edit_after_the_debate_ends(tmp_path: Path, api: FakeSlack) -> None:
    clock, ticks = HeldClock(hold=5), SteppedClock()
    async with open_harness(tmp_path, api, script=TIE, clock=clock, slack=SLACK_WINDOW) as slack:
        slack.app.front.countdown_clock = ticks
        await _open_tie_window(slack, api)
        handle = slack.running()
        assert handle is not None
        await ticks.wait_for_sleepers()
        reply = await slack.slash("stop")  # mid-window
        assert reply.status == 200
        await api.wait_until(lambda: handle.done)
        await slack.settle()
        assert ticks.sleepers == 0  # the ticker went with the debate
        ended_at = len(_card_updates(slack, api))
        await ticks.advance(120)
        await slack.settle()
        updates = _card_updates(slack, api)
        assert len(updates) == ended_at
        assert "Voting is closed." in updates[-1] and "left" not in updates[-1]


async def test_a_short_budget_skips_the_countdown_not_the_closed_card(tmp_path: Path, api: FakeSlack) -> None:
    clock, ticks = HeldClock(hold=5), SteppedClock()
    slack_settings = {**SLACK_WINDOW, "edit_interval": 0.05}
    async with open_harness(tmp_path, api, script=TIE, clock=clock, slack=slack_settings) as slack:
        slack.app.front.countdown_clock = ticks
        await _open_tie_window(slack, api)
        edits = rates_of(slack.app.front.client)["chat.update"]
        edits.hits.extend([edits.now()] * 30)  # other debates used 30 of the workspace's 50 edits
        skipped = edits.skipped
        await ticks.wait_for_sleepers()
        await ticks.advance(30)  # a refresh is due, but the budget has no room to spare for it
        await api.wait_until(lambda: edits.skipped > skipped)
        await clock.release()
        await api.wait_until(lambda: "Voting is closed." in blocks_text(_card(slack) or {"text": ""}))
        await slack.settle()
        figures = [seconds_shown(u) for u in _card_updates(slack, api)]
        assert 90 not in figures  # skipped, then superseded by the closed card
        assert "left" not in _card_updates(slack, api)[-1]
