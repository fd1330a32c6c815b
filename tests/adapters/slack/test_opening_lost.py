"""The opening card when Slack fails as it is posted, through the real Bolt app over signed HTTP:
a card Slack posted but whose answer was lost is found in the channel and the debate runs under it
(it used to stay "Seating the cast…" beside a "can't post" reply, and asking again posted another);
while Slack answers 500s the start waits for it and posts one card once it is back (it used to give
up at the first 500s and tell the person to try again, or, with Slack's whole API down, tell nobody);
past the wait it is said as Slack not answering (not as a channel the bot must be invited to),
nothing is left behind, and asking again once Slack is back starts it."""

from __future__ import annotations

import asyncio
import time

import pytest

from adapters.delivery.outage import OutageLimits
from adapters.slack.delivery import opening
from testkit.slack_api import DROP_AFTER
from tests.adapters.slack.conftest import ALICE, CHANNEL, Harness

TOPIC = "Should cities ban cars?"


def _opening(args: dict[str, object]) -> bool:
    return "thread_ts" not in args


def openings_posted(slack: Harness) -> int:
    return sum(_opening(c.args) for c in slack.api.calls_to("chat.postMessage"))


async def debate_ran_under_one_card(slack: Harness) -> None:
    await slack.wait_running()
    await slack.settle()
    assert len(slack.api.top_level(CHANNEL)) == 1  # the card that landed, and no other
    assert slack.thread()[-1]["text"].startswith("The end")  # the debate ran under it
    assert slack.ephemerals_to(ALICE) == []  # (a mention's answer is the card; no "can't post")


async def test_an_opening_card_whose_answer_was_lost_carries_the_debate(slack: Harness) -> None:
    slack.api.fail_next("chat.postMessage", status=DROP_AFTER, when=_opening)
    await slack.mention(f"debate {TOPIC}")
    await debate_ran_under_one_card(slack)
    assert openings_posted(slack) == 1  # found by reading the channel back, not posted again


async def test_an_opening_card_slack_answered_with_500s_is_posted_once_slack_answers(slack: Harness) -> None:
    slack.api.fail_next(
        "chat.postMessage", status=500, error="internal_error", when=_opening, for_seconds=1.5
    )
    began = time.monotonic()
    await slack.mention(f"debate {TOPIC}")
    await debate_ran_under_one_card(slack)
    assert time.monotonic() - began >= 1.5  # it waited for Slack ...
    assert openings_posted(slack) >= 2  # ... posting again only after reading back that none landed


@pytest.mark.slow
async def test_a_start_with_slack_down_for_30_s_shows_one_card_once_slack_is_back(slack: Harness) -> None:
    """Slack carries the first post out but its answer is lost, then its whole API answers 500s for
    30 s (the read-back too): the start cannot tell whether the card landed, so it does not post
    again; once Slack answers it finds the card and the debate runs under it, the only one."""
    await slack.mention("help")  # the app has been serving (Bolt has checked its token)
    await slack.told(ALICE)
    slack.api.fail_next("chat.postMessage", status=DROP_AFTER, when=_opening)
    slack.api.down(30)
    began = time.monotonic()
    await slack.mention(f"debate {TOPIC}")
    await slack.api.wait_until(lambda: slack.running() is not None, within=60)
    assert time.monotonic() - began >= 30  # the debate began once Slack was back
    await slack.settle()
    assert len(slack.api.top_level(CHANNEL)) == 1
    assert slack.thread()[-1]["text"].startswith("The end")
    assert slack.ephemerals_to(ALICE)[1:] == []  # nothing said but the help
    assert openings_posted(slack) == 1


@pytest.mark.slow
async def test_an_opening_card_slack_did_not_post_within_the_wait_is_said_as_slack_not_answering(
    slack: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(opening, "OPENING_WAIT", OutageLimits(limit=2.0, first_probe=0.5, longest_probe=1.0))
    slack.api.fail_next("chat.postMessage", status=500, error="internal_error", when=_opening, for_seconds=6)
    await slack.mention(f"debate {TOPIC}")
    told = await slack.told(ALICE)
    assert "Slack didn't answer" in told and "/invite" not in told, told
    assert slack.api.top_level(CHANNEL) == [] and await slack.rt.store.list_debates() == []
    await asyncio.sleep(6)  # Slack answers again
    await slack.mention(f"debate {TOPIC}")  # once Slack answers again, asking again starts it
    await slack.wait_running()
    await slack.settle()
    assert len(slack.api.top_level(CHANNEL)) == 1
    assert slack.thread()[-1]["text"].startswith("The end")
