"""The opening card when Slack fails as it is posted, through the real Bolt app over signed HTTP:
a card Slack posted but whose answer was lost is found in the channel and the debate runs under it
(it used to stay "Seating the cast…" beside a "can't post" reply, and asking again posted another);
a card Slack did not post while it answered 500s is said as Slack not answering (not as a channel
the bot must be invited to), nothing is left behind, and asking again once Slack is back starts it."""

from __future__ import annotations

import asyncio

from testkit.slack_api import DROP_AFTER
from tests.adapters.slack.conftest import ALICE, CHANNEL, Harness

TOPIC = "Should cities ban cars?"


def _opening(args: dict[str, object]) -> bool:
    return "thread_ts" not in args


async def test_an_opening_card_whose_answer_was_lost_carries_the_debate(slack: Harness) -> None:
    slack.api.fail_next("chat.postMessage", status=DROP_AFTER, when=_opening)
    await slack.mention(f"debate {TOPIC}")
    await slack.wait_running()
    await slack.settle()
    assert len(slack.api.top_level(CHANNEL)) == 1  # the card that landed, and no other
    assert slack.thread()[-1]["text"].startswith("The end")  # the debate ran under it
    assert slack.ephemerals_to(ALICE) == []  # (a mention's answer is the card; no "can't post")


async def test_an_opening_card_slack_answered_with_500s_is_said_as_slack_not_answering(
    slack: Harness,
) -> None:
    slack.api.fail_next("chat.postMessage", status=500, error="internal_error", when=_opening, for_seconds=3)
    await slack.mention(f"debate {TOPIC}")
    told = await slack.told(ALICE)
    assert "Slack didn't answer" in told and "/invite" not in told, told
    assert slack.api.top_level(CHANNEL) == [] and await slack.rt.store.list_debates() == []
    await asyncio.sleep(3.5)  # Slack answers again
    await slack.mention(f"debate {TOPIC}")  # once Slack answers again, asking again starts it
    await slack.wait_running()
    await slack.settle()
    assert len(slack.api.top_level(CHANNEL)) == 1
    assert slack.thread()[-1]["text"].startswith("The end")
