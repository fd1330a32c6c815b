"""When a debate ends, its result reaches the channel it was started from (real discord.py through
simcord): a short message linking the thread, and the start card updated with it."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.discord import create_bot
from tests.adapters.discord.conftest import TOPIC, World, buttons_of
from tests.adapters.discord.test_formats import NOTES, PANEL

PAUSED: dict[str, Any] = {"humans": "vote"}


async def test_the_result_is_posted_to_the_parent_channel(world: World) -> None:
    started = await world.start(topic=TOPIC)
    await world.env.settle()
    thread = world.thread()
    posted = [m for m in world.channel.history() if m.content.startswith("🏁 **Debate over")]
    assert len(posted) == 1
    lines = posted[0].content.splitlines()
    assert lines[0] == f"🏁 **Debate over: {TOPIC}**"
    assert lines[1].startswith("🏆 Last vote: ")
    assert lines[2] == "*Both sides made their case; the question is how fast, and for whom.*"
    assert lines[3] == f"The whole debate: <#{thread.id}>"
    assert world.env.bot.user is not None
    assert posted[0].author.id == world.env.bot.user.id
    # the start card says it too, and only Transcript is left on it
    assert started.response is not None
    card = started.response.content.splitlines()
    assert card[1] == "🏁 " + lines[1].removeprefix("🏆 ")
    assert [c["label"] for row in started.response.components for c in row["components"]] == ["Transcript"]


async def test_a_stopped_debate_is_reported_as_stopped(world: World) -> None:
    started = await world.start(**PAUSED)
    assert started.response is not None
    await world.alice.slash(world.channel, "debate stop")
    await world.env.settle()
    [posted] = [m for m in world.channel.history() if m.content.startswith("🏁 **Debate over")]
    assert posted.content.splitlines()[0] == f"🏁 **Debate over: {TOPIC}** (stopped by alice)"
    assert "🏆" not in posted.content
    assert started.response.content.splitlines()[1] == "🏁 Stopped by alice"


@pytest.mark.rostra(script=PANEL, formats={"panel": {"rounds": 0}})
async def test_a_start_with_files_still_shows_the_channel_a_card(world: World) -> None:
    files: dict[str, Any] = {f"document{i}": note for i, note in enumerate(NOTES, 1)}
    result = await world.start(format="panel", topic="What should the city do about cars?", **files)
    await world.env.settle()
    assert result.ephemeral  # the reply to the person stays private (files are checked late)
    thread = world.thread()
    [card] = [m for m in world.channel.history() if m.content.startswith("🎙️ Debate started")]
    lines = card.content.splitlines()
    assert lines[0] == f"🎙️ Debate started: **What should the city do about cars?** → <#{thread.id}>"
    assert lines[1].startswith("🏁 ")  # and it carries the result once over
    assert [c.label for c in buttons_of(card)] == ["Transcript"]
    [posted] = [m for m in world.channel.history() if m.content.startswith("🏁 **Debate over")]
    assert posted.content.splitlines()[-1] == f"The whole debate: <#{thread.id}>"


async def test_a_debate_resumed_after_a_restart_still_reports_its_result(world: World) -> None:
    started = await world.start(**PAUSED)  # waits in the people's window
    assert started.response is not None
    await world.env.restart_bot(create_bot(world.rt))
    resuming = world.bot.resuming
    assert resuming is not None
    await resuming
    await world.env.settle()

    await world.env.advance_time(30)  # the reopened window closes; the debate ends
    await world.env.settle()
    [posted] = [m for m in world.channel.history() if m.content.startswith("🏁 **Debate over")]
    assert posted.content.splitlines()[0] == f"🏁 **Debate over: {TOPIC}**"
    assert posted.content.splitlines()[-1] == f"The whole debate: <#{world.thread().id}>"
    assert started.response.content.splitlines()[1].startswith("🏁 ")
    assert [c["label"] for row in started.response.components for c in row["components"]] == ["Transcript"]
