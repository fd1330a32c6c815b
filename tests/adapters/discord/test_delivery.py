"""Delivery when Discord says no: webhooks denied, deleted or lost in a restart (5xx answers, which
simcord cannot model with discord.py's own retries, are in test_failures.py)."""

from __future__ import annotations

import discord
import pytest

from adapters.discord import create_bot
from core.events import DebateCompleted, TurnCompleted
from tests.adapters.discord.conftest import World, cards

NOTICE = "Give Rostra the **Manage Webhooks** permission"


def _webhook_creations(world: World) -> list[str]:
    return [r.path for r in world.env.http_requests if r.method == "POST" and r.path.endswith("/webhooks")]


@pytest.mark.parametrize("denied_by", ["injected 50013", "channel overwrite"])
async def test_without_manage_webhooks_personas_speak_as_embed_authors(world: World, denied_by: str) -> None:
    channel = world.channel
    if denied_by == "injected 50013":
        world.env.inject_error(
            "POST", "/channels/*/webhooks", status=403, code=50013, message="Missing Permissions"
        )
    else:
        me = world.guild.me
        assert me is not None
        overwrite = discord.PermissionOverwrite(manage_webhooks=False)
        channel = world.guild.create_text_channel("no-hooks", overwrites={me: overwrite})

    await world.start(channel=channel)

    thread = world.thread(channel)
    events = await world.events()
    assert isinstance(events[-1], DebateCompleted)
    notices = [m.content for m in thread.history() if NOTICE in m.content]
    assert notices == [
        f"⚠️ Personas speak as Rostra in this debate because I can't manage webhooks in <#{channel.id}>."
        f" {NOTICE} there to let each persona post under its own name and avatar."
    ]
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    authored = [e for e in cards(thread) if e.author.name]
    assert [(e.author.name, e.author.icon_url) for e in authored] == [
        (t.speaker.name, t.speaker.avatar_url) for t in turns
    ]
    assert authored[0].description == f"-# Round 1 · for the motion\n{turns[0].text}"
    assert world.persona_requests() == []
    values = await world.rt.store.binding_values(events[-1].debate_id)
    assert values["discord.persona_mode"] == "embeds"


async def test_a_deleted_webhook_is_recreated(world: World) -> None:
    await world.start()
    [first] = {m.webhook_id for m in world.channel.history() if m.webhook_id}
    hook = await world.bot.fetch_webhook(first)
    await hook.delete()

    await world.start(world.bob, topic="Should offices be optional?")

    second = {m.webhook_id for m in world.channel.history() if m.webhook_id} - {first}
    assert len(second) == 1
    assert len(_webhook_creations(world)) == 2
    assert not any("Discord refused" in m.content for m in world.channel.threads[-1].history())
    latest = await world.events()
    assert isinstance(latest[-1], DebateCompleted)


async def test_the_webhook_is_found_again_after_a_restart(world: World) -> None:
    await world.start()
    [first] = {m.webhook_id for m in world.channel.history() if m.webhook_id}

    await world.env.restart_bot(create_bot(world.rt))
    await world.start(world.bob, topic="Should offices be optional?")

    assert {m.webhook_id for m in world.channel.history() if m.webhook_id} == {first}
    assert len(_webhook_creations(world)) == 1
    assert (cards(world.channel.threads[-1])[-1].title or "").startswith("🏁")
