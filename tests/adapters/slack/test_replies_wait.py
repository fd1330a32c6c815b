"""What the person who asked is told when Slack fails as Rostra answers, through the real Bolt app
over signed HTTP: a mention's refusal (`chat.postEphemeral`), a slash command's later answer (its
`response_url`) and a button vote's confirmation wait Slack out and reach the person once, once
Slack is back (they used to be dropped after slack_sdk's own retries, a second or two, leaving the
person with nothing)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from adapters.slack.delivery.pointers import pointer_text
from adapters.slack.inbound.replies import REPLY_WAIT
from core.admission import already_running
from core.events import VotingClosed
from testkit.slack_api import DROP_AFTER, FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    ALICE,
    BOB,
    CHANNEL,
    SLOW_FIRST_TURN,
    Harness,
    blocks_text,
    open_harness,
)
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
    """Slack's Web API fails for 4 s and its response_urls for 15 s as `/debate <topic>` arrives: the
    command is acknowledged in time ("Working on it…"), the opening card waits for Slack, the
    debate goes on in its thread meanwhile, and the answer saying it started follows through the
    response_url once Slack takes it, once."""
    await slack.mention("help")  # the app has been serving (Bolt has checked its token)
    await slack.told(ALICE)
    slack.api.down(4.0)
    slack.api.responses_down(15.0)
    back = time.monotonic() + 15.0
    reply = await slack.slash(TOPIC)
    assert reply.status == 200 and reply.body.get("text", "").startswith("⏳"), reply.body
    await slack.api.wait_until(
        lambda: len(slack.api.top_level(CHANNEL)) == 1 and slack.thread() != [], within=30
    )
    assert time.monotonic() < back  # the debate did not wait for its answer to be taken
    await slack.api.wait_until(lambda: slack.api.responses != [], within=40)
    assert time.monotonic() >= back
    await slack.settle()  # the debate started before its answer was taken (it may have ended since)
    await slack.only_debate_id()
    [answer] = [r["text"] for r in slack.api.responses]
    assert answer.startswith("Starting a debate on"), answer
    assert len(slack.api.top_level(CHANNEL)) == 1


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("seconds", [5.0, 30.0])
async def test_a_refusal_waiting_for_slack_keeps_no_one_else_from_starting_in_the_channel(
    tmp_path: Path, api: FakeSlack, seconds: float
) -> None:
    """Slack fails as Alice, still in her cooldown, asks for a debate; Bob asks in the same channel a
    moment later. Once Slack is back Alice is told why, once, and Bob's debate runs there: he used
    to be told the channel was busy, as Alice's refusal held its start until Slack took it."""
    async with open_harness(tmp_path, api, limits={"user_cooldown": 600}) as slack:
        await slack.mention("debate Tabs or spaces? humans=off", channel="COTHER")  # her cooldown runs
        await slack.wait_running("COTHER")
        told_before = len(slack.ephemerals_to(ALICE))
        api.down(seconds)
        back = time.monotonic() + seconds
        await slack.mention(f"debate {TOPIC}")
        await asyncio.sleep(0.5)  # Alice's refusal is waiting for Slack
        await slack.mention("debate Should towns ban cars?", user=BOB)
        await api.wait_until(lambda: len(slack.ephemerals_to(ALICE)) > told_before, within=seconds + 30)
        assert time.monotonic() >= back
        await api.wait_until(lambda: slack.running() is not None, within=30)  # Bob's card waits its turn
        handle = await slack.wait_running()
        await slack.settle()
        [refusal] = slack.ephemerals_to(ALICE)[told_before:]  # told once
        assert "You started a debate moments ago" in refusal, refusal
        assert slack.ephemerals_to(BOB) == []  # not told the channel was busy: the card is his answer
        [card] = api.top_level(CHANNEL)
        assert "Should towns ban cars?" in blocks_text(card)
        assert handle.spec.topic == "Should towns ban cars?"


@pytest.mark.slow
@pytest.mark.parametrize("seconds", [5.0, 30.0])
async def test_the_link_back_to_a_debate_asked_for_in_a_thread_waits_for_slack(
    tmp_path: Path, api: FakeSlack, seconds: float
) -> None:
    """Alice asks for a debate inside a thread; Slack fails every post to that thread for a while,
    the link back to the debate included. The debate is under way in its own thread meanwhile, Bob's
    start in the channel is told a debate runs there (not that one is being set up), and the link
    reaches Alice's thread once Slack is back, once. It used to be dropped after slack_sdk's own
    retries, with the channel's start lock held while they ran."""
    asked_in = api.person_says(CHANNEL, ALICE, "What about the cars in town?")
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=clock) as slack:
        api.fail_next(
            "chat.postMessage",
            status=500,
            error="internal_error",
            when=lambda args: args.get("thread_ts") == asked_in,
            for_seconds=seconds,
        )
        back = time.monotonic() + seconds
        await slack.mention(f"debate {TOPIC}", thread_ts=asked_in)
        await api.wait_until(lambda: clock.waiting == 1, within=30)  # the first turn is being spoken
        await slack.mention("debate Should towns ban cars?", user=BOB)
        assert await slack.told(BOB) == "🚫 " + already_running(TOPIC)
        assert time.monotonic() < back
        await api.wait_until(lambda: api.thread(CHANNEL, asked_in) != [], within=seconds + 30)
        assert time.monotonic() >= back
        await clock.release()
        await slack.settle()
        [link] = api.thread(CHANNEL, asked_in)  # once
        assert link["text"] == pointer_text(TOPIC, CHANNEL, slack.opening()["ts"])
        assert slack.thread()[-1]["text"].startswith("The end")


async def test_a_link_back_whose_answer_was_lost_is_found_in_the_thread_not_posted_again(
    tmp_path: Path, api: FakeSlack
) -> None:
    """Slack posts the link in Alice's thread but its answer is lost (the connection drops): the
    thread is read back, the link is found there and is not posted a second time (a reply waiting
    Slack out used to post it again)."""
    asked_in = api.person_says(CHANNEL, ALICE, "What about the cars in town?")
    async with open_harness(tmp_path, api) as slack:
        api.fail_next(
            "chat.postMessage", status=DROP_AFTER, when=lambda args: args.get("thread_ts") == asked_in
        )
        await slack.mention(f"debate {TOPIC}", thread_ts=asked_in)
        await slack.wait_running()
        await slack.settle()
        await asyncio.sleep(REPLY_WAIT.first_probe + 1)  # past the time a second try would be made
        [link] = api.thread(CHANNEL, asked_in)  # the one that landed, found again
        assert link["text"] == pointer_text(TOPIC, CHANNEL, slack.opening()["ts"])
        assert len([c for c in api.calls_to("chat.postMessage") if c.args.get("thread_ts") == asked_in]) == 1
        assert slack.thread()[-1]["text"].startswith("The end")
        assert slack.ephemerals_to(ALICE) == []
