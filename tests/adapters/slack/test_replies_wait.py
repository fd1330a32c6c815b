"""What the person who asked is told when Slack fails as Rostra answers, through the real Bolt app
over signed HTTP: a mention's refusal (`chat.postEphemeral`), a slash command's later answer (its
`response_url`) and a button vote's confirmation wait Slack out and reach the person once, once
Slack is back (they used to be dropped after slack_sdk's own retries, a second or two, leaving the
person with nothing)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.events import VotingClosed
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, CHANNEL, Harness, open_harness
from tests.adapters.slack.interactive import block_actions, interact
from tests.adapters.slack.test_ballot_buttons import BUTTONS, buttons, tie_open, vote_card
from tests.adapters.slack.test_resume import TIE

TOPIC = "Should cities ban cars?"


@pytest.mark.parametrize("seconds", [3.0, pytest.param(30.0, marks=pytest.mark.slow)])
async def test_a_refusal_said_while_slack_fails_reaches_the_person_once_it_is_back(
    slack: Harness, seconds: float
) -> None:
    await slack.mention("help")  # the app has been serving (Bolt has checked its token)
    await slack.told(ALICE)
    slack.api.down(seconds)
    back = time.monotonic() + seconds
    await slack.mention(f"debate {TOPIC} format=shouting")
    await slack.api.wait_until(lambda: len(slack.ephemerals_to(ALICE)) >= 2, within=seconds + 30)
    assert time.monotonic() >= back
    [refusal] = slack.ephemerals_to(ALICE)[1:]  # told once
    assert refusal.startswith("🚫") and "shouting" in refusal, refusal
    assert slack.api.top_level(CHANNEL) == [] and await slack.rt.store.list_debates() == []


@pytest.mark.slow
async def test_a_slash_commands_answer_waits_for_slack_as_its_debate_starts(slack: Harness) -> None:
    """Slack's Web API fails for 4 s and its response_urls for 10 s as `/debate <topic>` arrives: the
    command is acknowledged in time ("Working on it…"), the opening card waits for Slack, and the
    answer saying the debate starts follows through the response_url once Slack takes it, once."""
    await slack.mention("help")  # the app has been serving (Bolt has checked its token)
    await slack.told(ALICE)
    slack.api.down(4.0)
    slack.api.responses_down(10.0)
    back = time.monotonic() + 10.0
    reply = await slack.slash(TOPIC)
    assert reply.status == 200 and reply.body.get("text", "").startswith("⏳"), reply.body
    await slack.api.wait_until(lambda: slack.api.responses != [], within=40)
    assert time.monotonic() >= back
    await slack.wait_running()
    await slack.settle()
    [answer] = [r["text"] for r in slack.api.responses]
    assert answer.startswith("Starting a debate on"), answer
    assert len(slack.api.top_level(CHANNEL)) == 1


async def test_a_button_vote_clicked_while_slack_fails_is_counted_and_confirmed_once_it_is_back(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=TIE, clock=clock, slack=BUTTONS) as slack:
        await tie_open(slack)
        card = vote_card(slack)
        button = buttons(card)["replace"]
        action = {"type": "button", "block_id": "b", "action_id": button["action_id"]}
        action["value"] = button["value"]
        before = len(slack.ephemerals_to(ALICE))
        api.down(3.0)
        back = time.monotonic() + 3.0
        assert (await interact(slack, block_actions(slack, ALICE, action, message=card))).status == 200
        await api.wait_until(lambda: len(slack.ephemerals_to(ALICE)) > before, within=30)
        assert time.monotonic() >= back
        assert slack.ephemerals_to(ALICE)[before:] == ["You voted ❌ Replace."]  # told once
        await clock.release()
        await slack.settle()
        events = await slack.events(await slack.only_debate_id())
        [closed] = [e for e in events if isinstance(e, VotingClosed)]
        assert closed.human_tally == {"keep": 0, "replace": 1}
