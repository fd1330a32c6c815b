"""Slack input rules: bounded numbers, replayed slash commands, redelivered and late reactions,
invisible topics."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import (
    ALICE,
    BOB,
    CHANNEL,
    Harness,
    envelope,
    reaction_event,
)
from tests.adapters.slack.test_votes import people, people_voting


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Cars? duration=" + "9" * 4400, "duration"),
        ("Cars? rounds=" + "9" * 4400, "rounds"),
        ("Cars? duration=" + "1" * 40 + "m", "duration"),
    ],
)
async def test_huge_numbers_are_refused_in_one_short_line(slack: Harness, text: str, says: str) -> None:
    reply = await slack.slash(text)
    assert reply.status == 200
    said = str(reply.body["text"])
    assert says in said and len(said) < 300 and "\n" not in said
    assert await slack.rt.store.list_debates() == []


async def test_a_replayed_slash_command_starts_nothing_more(slack: Harness) -> None:
    first = await slack.slash("Should cities ban cars?", trigger_id="13345224609.738474920.8088930838d")
    again = await slack.slash("Should cities ban cars?", trigger_id="13345224609.738474920.8088930838d")
    assert first.body["text"].startswith("Starting a debate")
    assert again.status == 200 and not again.body.get("text")
    # the scripted debate may already be over by now: look for it in the store, not among the running
    for _ in range(400):
        if await slack.rt.store.list_debates():
            break
        await asyncio.sleep(0.05)
    await slack.settle()
    assert len(await slack.rt.store.list_debates()) == 1


@pytest.mark.parametrize("topic", ["\u200b\u200b", "\u2060 \ufeff", "\u200b\u3164"])
async def test_a_topic_with_nothing_visible_is_empty(slack: Harness, topic: str) -> None:
    reply = await slack.slash(topic)
    assert "The topic is empty" in reply.body["text"]
    assert await slack.rt.store.list_debates() == []


async def test_redelivered_and_late_reactions_do_not_undo_a_changed_vote(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with people_voting(tmp_path, api) as (slack, handle, card, _):
        keep = reaction_event(True, ALICE, "white_check_mark", card)
        api.react(CHANNEL, card, "white_check_mark", ALICE)
        first = envelope(keep)
        await slack.post(json.dumps(first), "application/json")
        await api.wait_until(lambda: people(handle) == {ALICE: "keep"})
        late_removal = reaction_event(False, ALICE, "x", card)  # made now, delivered after the change

        await slack.react(ALICE, "x", card)  # Alice changes her mind
        await api.wait_until(lambda: people(handle) == {ALICE: "replace"})

        await slack.post(json.dumps(first), "application/json")  # Slack redelivers the ✅ event
        await slack.post(json.dumps(envelope(late_removal)), "application/json")  # an older ❌ removal
        await asyncio.sleep(0.2)
        assert people(handle) == {ALICE: "replace"}


async def test_a_reaction_delivered_after_a_newer_one_does_not_become_the_vote(
    tmp_path: Path, api: FakeSlack
) -> None:
    """Slack retries an event it saw no answer to, after the events made since: Bob's ✅ (made
    first) arrives after his ❌; his vote is the ❌, as the card shows it newest."""
    async with people_voting(tmp_path, api) as (slack, handle, card, _):
        made_first = reaction_event(True, BOB, "white_check_mark", card)
        api.react(CHANNEL, card, "white_check_mark", BOB)
        await slack.react(BOB, "x", card)
        await api.wait_until(lambda: people(handle) == {BOB: "replace"})
        await slack.post(json.dumps(envelope(made_first)), "application/json")  # the late delivery
        await asyncio.sleep(0.2)
        assert people(handle) == {BOB: "replace"}
        await slack.react(BOB, "x", card, added=False)  # his ✅ is still on the card: it is his vote now
        await api.wait_until(lambda: people(handle).get(BOB) == "keep")


async def test_every_mrkdwn_text_object_is_verbatim(slack: Harness) -> None:
    await slack.mention("debate Should @channel ban cars? Ask @here")
    await slack.wait_running()
    await slack.settle()
    texts = [
        obj
        for message in slack.api.posted
        for block in message.get("blocks") or []
        for obj in [block.get("text"), *block.get("elements", [])]
        if isinstance(obj, dict) and obj.get("type") == "mrkdwn"
    ]
    assert texts and all(obj.get("verbatim") is True for obj in texts)
