"""Requests that reach Rostra while Slack fails, through the real Bolt app over signed HTTP: who the
bot is was learned at startup (`check_token`), so a mention is served without asking Slack again
(Bolt's own single-workspace authorization asked on the first request and, Slack failing, answered
"please install this app": the mention was lost, Slack never sending it again). Where startup did
not learn it, a slash command is told Slack is not answering, and an event is answered 500, so that
Slack sends it again, and served then."""

from __future__ import annotations

import asyncio
import json

import pytest

from adapters.slack.serve import check_token
from testkit.slack_world import envelope, mention_event, sign
from tests.adapters.slack.conftest import ALICE, CHANNEL, Harness

pytestmark = pytest.mark.slow

TOPIC = "Should cities ban cars?"
DOWN = 8.0
"""Seconds Slack fails: past slack_sdk's own retries of `auth.test` (two, about 3 s)."""


async def test_a_mention_while_slack_fails_is_served_with_who_the_bot_is_from_startup(slack: Harness) -> None:
    await check_token(slack.app)  # as `rostra slack` does before serving
    slack.api.down(DOWN)
    await slack.mention(f"debate {TOPIC}")  # answered at once: no call to Slack before the debate's
    await slack.api.wait_until(lambda: slack.running() is not None, within=30)
    await slack.settle()
    assert len(slack.api.top_level(CHANNEL)) == 1
    assert slack.thread()[-1]["text"].startswith("The end")
    assert len(slack.api.calls_to("auth.test")) == 1  # the startup's


async def test_a_slash_command_slack_cannot_authorize_is_told_slack_is_not_answering(slack: Harness) -> None:
    slack.api.down(DOWN)
    reply = await slack.slash(f"debate {TOPIC}")
    assert reply.status == 200
    assert reply.body["text"] == "🚫 Slack isn't answering right now; try again in a moment.", reply.body
    assert await slack.rt.store.list_debates() == []


async def test_a_mention_slack_cannot_authorize_is_answered_500_and_served_when_slack_sends_it_again(
    slack: Harness,
) -> None:
    slack.api.down(DOWN)
    body = json.dumps(envelope(mention_event(f"debate {TOPIC}", user=ALICE, channel=CHANNEL)))
    response = await slack.post(body, "application/json")
    assert response.status == 500  # Slack sends an event it got no 200 for again
    assert await slack.rt.store.list_debates() == []
    await asyncio.sleep(DOWN)  # Slack answers again; it sends the event a while later
    again = {**sign(body), "X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_error"}
    assert (await slack.post(body, "application/json", again)).status == 200
    await slack.wait_running()
    await slack.settle()
    assert len(slack.api.top_level(CHANNEL)) == 1
    assert slack.thread()[-1]["text"].startswith("The end")
