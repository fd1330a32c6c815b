"""Slack's longer default voting window (people read Slack in passing): applied where the format
takes a window and the request sets none, and said on the opening card in words that fit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adapters.slack.ballots.windows import span, with_platform_window
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import blocks_text, open_harness
from tests.adapters.slack.test_resume import TIE

SLACK_DEFAULT = {"human_window": 120}


@pytest.mark.parametrize(
    ("seconds", "words"), [(30, "30 s"), (60, "60 s"), (90, "90 s"), (120, "2 min"), (150, "2 min 30 s")]
)
def test_spans_read_naturally(seconds: int, words: str) -> None:
    assert span(seconds) == words


async def test_slack_gives_people_longer_to_vote_by_default(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, slack=SLACK_DEFAULT) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        assert handle.spec.options["human_window"] == 120
        await slack.settle()
        assert "react ✅ Keep or ❌ Replace on the vote card within 2 min" in blocks_text(slack.opening())


async def test_a_window_asked_for_wins(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, slack=SLACK_DEFAULT) as slack:
        await slack.mention("debate Should cities ban cars? human_window=45 humans=off")
        handle = await slack.wait_running()
        assert str(handle.spec.options["human_window"]) == "45"
        await slack.settle()


def test_formats_without_a_window_get_none() -> None:
    assert with_platform_window({"rounds": 2}, takes_window=False, seconds=120) == {"rounds": 2}
    assert with_platform_window({}, takes_window=True, seconds=None) == {}
    assert with_platform_window({}, takes_window=True, seconds=120) == {"human_window": 120}


async def test_the_format_default_when_slack_sets_none(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, slack={"human_window": None}) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        assert "human_window" not in handle.spec.options
        await slack.settle()
        assert "within 30 s" in blocks_text(slack.opening())


async def test_an_open_window_says_when_it_closes(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=TIE, clock=clock, slack=SLACK_DEFAULT) as slack:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()

        def card_text() -> str:
            cards = [m for m in slack.thread() if m["text"].startswith("Vote: ")]
            return blocks_text(cards[0]) if cards else ""

        await api.wait_until(lambda: "It's a tie" in card_text())
        text = card_text()
        assert "within 2 min" in text
        closes = re.search(r"voting closes at <!date\^(\d+)\^\{time\}\|(\d\d:\d\d) UTC>", text)
        assert closes is not None, text
        opened = next(
            e for e in await slack.events(await slack.only_debate_id()) if e.kind == "human_vote_opened"
        )
        assert int(closes.group(1)) == int(opened.at.timestamp() + 120)
        await clock.release()
        await slack.settle()
