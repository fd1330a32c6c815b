"""`/debate` and the mention commands: fast acks, ephemeral refusals that start nothing, and
stop / status / transcript / personas / help."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.events import DebateCompleted, TurnCompleted, TurnStarted
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    SLOW_FIRST_TURN,
    Harness,
    blocks_text,
    open_harness,
)


async def test_the_slash_command_is_acked_before_the_first_turn_is_spoken(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=clock) as slack:
        reply = await slack.slash("Should cities ban cars? rounds=1")
        assert reply.status == 200
        assert reply.seconds < 3
        assert reply.body == {
            "text": "Starting a debate on *Should cities ban cars?*: follow it in the thread under my"
            " opening card.",
            "response_type": "ephemeral",
        }
        handle = await slack.wait_running()
        await api.wait_until(lambda: clock.waiting == 1)  # the model is still on the first turn
        kinds = [type(e) for e in await slack.events(handle.debate_id)]
        assert TurnStarted in kinds
        assert TurnCompleted not in kinds
        await clock.release()
        await slack.settle()
        assert any(isinstance(e, TurnCompleted) for e in await slack.events(handle.debate_id))
        assert slack.thread()[-1]["text"].startswith("The end")


async def refused_by_slash(slack: Harness, text: str, user: str = ALICE) -> str:
    reply = await slack.slash(text, user=user)
    assert reply.status == 200
    assert reply.body["response_type"] == "ephemeral"
    return str(reply.body["text"])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Cars rounds=lots", "rounds must be a whole number (got 'lots')"),
        ("Cars format=shouting", "Unknown format 'shouting'. Choose one of: arena"),
        ("Cars humans=maybe", "humans must be one of"),
        ("Cars volume=11", "Unknown option 'volume'"),
        ("x" * 400, "the limit is 300"),
    ],
)
async def test_bad_input_is_refused_in_the_ack(slack: Harness, text: str, says: str) -> None:
    assert says in await refused_by_slash(slack, text)
    assert slack.api.calls_to("chat.postMessage") == []
    assert await slack.rt.store.list_debates() == []


async def test_bad_input_after_a_mention_is_refused_ephemerally(slack: Harness) -> None:
    await slack.mention("debate")
    assert "The topic is empty" in await slack.told(ALICE)
    (note,) = slack.api.ephemerals
    assert (note["channel"], note["user"]) == (CHANNEL, ALICE)
    assert slack.api.calls_to("chat.postMessage") == []
    assert await slack.rt.store.list_debates() == []


async def test_a_second_start_soon_after_is_refused_by_the_cooldown(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, limits={"user_cooldown": 60}) as slack:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        await slack.settle()
        posts = len(api.calls_to("chat.postMessage"))
        assert "You started a debate moments ago" in await refused_by_slash(slack, "Should towns ban cars?")
        await slack.mention("debate Should villages ban cars?")
        assert "You started a debate moments ago" in await slack.told(ALICE)
        assert len(api.calls_to("chat.postMessage")) == posts
        assert len(await slack.rt.store.list_debates()) == 1


async def test_one_debate_per_channel(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=clock) as slack:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        said = await refused_by_slash(slack, "Should towns ban cars?", user=BOB)
        assert "A debate is already running here ('Should cities ban cars?')" in said
        await slack.mention("debate Should towns ban cars?", user=BOB, thread_ts=slack.opening()["ts"])
        assert "already running here" in await slack.told(BOB)
        assert len(api.top_level(CHANNEL)) == 1
        await clock.release()
        await slack.settle()
        assert len(await slack.rt.store.list_debates()) == 1


async def test_only_permitted_people_may_start(tmp_path: Path, api: FakeSlack) -> None:
    api.usergroups["SMODS"] = [CAROL]
    restricted = {"starter_users": ["UBOSS"], "starter_groups": ["SMODS"]}
    async with open_harness(tmp_path, api, slack=restricted) as slack:
        assert "may start debates" in await refused_by_slash(slack, "Should cities ban cars?")
        await slack.mention("debate Should cities ban cars?", user=BOB)
        assert "may start debates" in await slack.told(BOB)
        assert api.calls_to("chat.postMessage") == []
        assert await slack.rt.store.list_debates() == []

        reply = await slack.slash("Should cities ban cars?", user=CAROL)  # a member of the group
        assert reply.body["text"].startswith("Starting a debate")
        await slack.wait_running()
        await slack.settle()
        (record,) = await slack.rt.store.list_debates()
        assert record.binding.started_by == CAROL
        assert [c.args["usergroup"] for c in api.calls_to("usergroups.users.list")] == ["SMODS"]  # cached


async def test_stop_status_transcript_personas_and_help(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(
        tmp_path, api, script=SLOW_FIRST_TURN, clock=clock, slack={"starter_users": [ALICE]}
    ) as slack:
        assert "No debate is running in this channel" in await refused_by_slash(slack, "status")
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: clock.waiting == 1)

        status = await refused_by_slash(slack, "status", user=BOB)
        assert "*Should cities ban cars?* (arena" in status
        assert "phase *debating*" in status
        assert "round 1" in status
        assert "has the floor" in status
        await slack.mention("status", user=BOB)
        assert "phase *debating*" in await slack.told(BOB)

        cast = await refused_by_slash(slack, "personas", user=BOB)
        assert all(p.name in cast for p in slack.rt.personas.values())
        help_text = await refused_by_slash(slack, "help", user=BOB)
        assert "`@Rostra debate <topic>" in help_text
        assert "`arena`" in help_text
        await slack.mention("dance for us", user=BOB)
        assert "I didn't understand “dance for us”" in await slack.told(BOB, 2)

        assert "Only the person who started this debate" in await refused_by_slash(slack, "stop", user=BOB)
        assert not handle.done
        assert "Stopping the debate on *Should cities ban cars?*" in await refused_by_slash(slack, "stop")
        await slack.settle()

        events = await slack.events(handle.debate_id)
        end = events[-1]
        assert isinstance(end, DebateCompleted)
        assert end.reason == "stopped"
        thread = slack.thread()
        assert thread[0]["text"].endswith("_(interrupted)_")
        closing = blocks_text(thread[-1])
        assert "stopped by a member of the channel" in closing
        assert "*Summary*" in closing
        assert "🏁 Finished: stopped by a member of the channel" in blocks_text(slack.opening())

        await slack.mention("transcript")
        assert "is attached in the debate's thread" in await slack.told(ALICE)
        picture, upload, page = api.files.values()  # the closing card's, then the transcript's two
        assert picture["filename"] == f"rostra-{handle.debate_id}-results.png"
        assert upload["filename"] == f"rostra-{handle.debate_id}.md"
        assert page["filename"] == f"rostra-{handle.debate_id}.html"
        assert upload["content"].startswith("# Should cities ban cars?")
        assert (upload["channel"], upload["thread_ts"]) == (CHANNEL, slack.opening()["ts"])
        assert "There is no debate `nope`" in await refused_by_slash(slack, "transcript nope")
