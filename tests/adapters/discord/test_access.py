"""Who may stop a debate, and who may read a stored one by its id."""

from __future__ import annotations

from typing import Any

import discord

from core.events import DebateCompleted
from tests.adapters.discord.conftest import TOPIC, World

PAUSED: dict[str, Any] = {"humans": "vote"}


async def test_by_default_only_the_starter_or_manage_threads_may_stop(world: World) -> None:
    mods = world.guild.create_role("Mods", permissions=discord.Permissions(manage_threads=True))
    erin = world.guild.add_member(world.env.create_user("erin"), roles=[mods])
    await world.start(**PAUSED)  # no starter roles configured: anyone may start

    refused = await world.bob.slash(world.channel, "debate stop")

    assert refused.ephemeral and refused.response is not None
    assert refused.response.content == (
        f"Only <@{world.alice.id}> (who started this debate) or a member with the Manage Threads"
        " permission can stop it."
    )
    assert not isinstance((await world.events())[-1], DebateCompleted)
    stopped = await erin.slash(world.channel, "debate stop")
    assert stopped.response is not None and stopped.response.content.startswith("Stopping the debate")


async def test_a_transcript_by_id_needs_sight_of_the_debates_channel(world: World) -> None:
    hidden = world.guild.create_text_channel(
        "staff",
        overwrites={
            world.guild.default_role: discord.PermissionOverwrite(view_channel=False),
            world.alice: discord.PermissionOverwrite(view_channel=True),
            world.me: discord.PermissionOverwrite(view_channel=True),
        },
    )
    await world.start(channel=hidden, topic="Staff pay for next year?")
    record = await world.latest()

    asked = await world.bob.slash(world.channel, "debate transcript", debate=record.id)

    assert asked.response is not None and asked.response.attachments == []
    assert asked.response.content == f"No debate `{record.id}` has run in this server."
    assert "Staff pay" not in asked.response.content
    allowed = await world.alice.slash(world.channel, "debate transcript", debate=record.id)
    assert allowed.response is not None
    assert allowed.response.attachments[0].filename == f"rostra-{record.id}.md"
    assert TOPIC not in allowed.response.content
