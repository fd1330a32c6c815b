"""Stop, Status and Transcript buttons on the start card (real discord.py through simcord): they do
what `/debate stop|status|transcript` do, refuse the wrong person privately, and keep working after
the bot restarts (persistent dynamic items keyed by the debate id)."""

from __future__ import annotations

from typing import Any

import pytest
from simcord import InteractionResult

from adapters.discord import create_bot
from core.events import DebateCompleted
from tests.adapters.discord.conftest import TOPIC, World, buttons_of, cards

PAUSED: dict[str, Any] = {"humans": "vote"}  # the debate waits in a people's window until time moves


def buttons(result: InteractionResult) -> dict[str, str]:
    assert result.response is not None
    return {c["label"]: c["custom_id"] for row in result.response.components for c in row["components"]}


def said(result: InteractionResult) -> str:
    assert result.ephemeral and result.response is not None
    return result.response.content


async def test_the_start_card_carries_stop_status_and_transcript(world: World) -> None:
    started = await world.start(**PAUSED)
    record = await world.latest()
    assert buttons(started) == {
        "Stop": f"rostra:stop:{record.id}",
        "Status": f"rostra:status:{record.id}",
        "Transcript": f"rostra:transcript:{record.id}",
    }
    assert started.response is not None and not started.ephemeral  # the channel sees it

    status = await world.bob.click(started.response, label="Status")
    by_command = await world.bob.slash(world.channel, "debate status")
    assert said(status) == said(by_command)
    assert TOPIC in said(status)


async def test_stop_asks_first_then_stops(world: World) -> None:
    started = await world.start(**PAUSED)
    assert started.response is not None
    asked = await world.alice.click(started.response, label="Stop")
    assert said(asked) == f"Stop the debate on **{TOPIC}** now? Its closing card follows in the thread."
    assert not isinstance((await world.events())[-1], DebateCompleted)  # nothing stopped yet

    assert asked.response is not None
    done = await world.alice.click(asked.response, label="Yes, stop it")
    thread = world.thread()
    assert said(done) == f"Stopping the debate; its closing card follows in <#{thread.id}>."
    last = (await world.events())[-1]
    assert isinstance(last, DebateCompleted) and last.reason == "stopped"
    assert cards(thread)[-1].title == f"🏁 Debate over: {TOPIC}"

    assert list(buttons(started)) == ["Transcript"]  # the card now shows the result
    again = await world.alice.click(asked.response, label="Yes, stop it")  # an old confirmation
    assert said(again) == "This debate has ended. Its transcript is one click away: **Transcript**."


@pytest.mark.rostra(discord={"starter_roles": ["Debaters"]})
async def test_stop_by_someone_not_allowed_is_refused_privately(world: World) -> None:
    debaters = world.guild.create_role("Debaters")
    dana = world.guild.add_member(world.env.create_user("dana"), roles=[debaters])
    started = await world.start(dana, **PAUSED)
    assert started.response is not None
    asked = await world.carol.click(started.response, label="Stop")
    assert asked.response is not None
    refused = await world.carol.click(asked.response, label="Yes, stop it")
    assert said(refused).startswith(f"Only <@{dana.id}> (who started this debate) can stop it.")
    assert not isinstance((await world.events())[-1], DebateCompleted)
    assert (await world.latest()).status == "running"


async def test_transcript_button_attaches_the_markdown_and_the_page(world: World) -> None:
    started = await world.start(**PAUSED)
    assert started.response is not None
    record = await world.latest()
    result = await world.carol.click(started.response, label="Transcript")
    assert said(result) == f"📜 Transcript of **{TOPIC}** (debate `{record.id}`)"
    attachment, page = result.response.attachments if result.response else []
    assert attachment.filename == f"rostra-{record.id}.md"
    assert page.filename == f"rostra-{record.id}.html"


async def test_the_buttons_work_after_a_restart(world: World) -> None:
    started = await world.start(**PAUSED)
    assert started.response is not None
    record = await world.latest()
    await world.env.restart_bot(create_bot(world.rt))
    resuming = world.bot.resuming
    assert resuming is not None
    await resuming
    await world.env.settle()

    status = await world.bob.click(started.response, label="Status")
    assert status.acknowledged
    assert TOPIC in said(status)
    transcript = await world.bob.click(started.response, label="Transcript")
    assert transcript.response is not None
    assert transcript.response.attachments[0].filename == f"rostra-{record.id}.md"
    asked = await world.alice.click(started.response, label="Stop")
    assert asked.response is not None
    done = await world.alice.click(asked.response, label="Yes, stop it")
    assert said(done).startswith("Stopping the debate")
    last = (await world.events())[-1]
    assert isinstance(last, DebateCompleted) and last.reason == "stopped"


async def test_the_threads_opening_card_carries_the_buttons_too(world: World) -> None:
    await world.start(**PAUSED)
    record = await world.latest()
    thread = world.thread()
    opening = next(m for m in thread.history() if m.embeds and m.embeds[0].title == f"🎙️ {TOPIC}")
    ids = [c.custom_id for c in buttons_of(opening)]
    assert ids == [f"rostra:stop:{record.id}", f"rostra:status:{record.id}", f"rostra:transcript:{record.id}"]

    status = await world.bob.click(opening, label="Status")  # from inside the thread
    assert TOPIC in said(status)
    asked = await world.alice.click(opening, label="Stop")
    assert asked.response is not None
    done = await world.alice.click(asked.response, label="Yes, stop it")
    assert said(done).startswith("Stopping the debate")
    await world.env.settle()
    opening = next(m for m in thread.history() if m.id == opening.id)
    assert [c.label for c in buttons_of(opening)] == ["Transcript"]
