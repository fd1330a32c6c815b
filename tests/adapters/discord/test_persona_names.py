"""Persona names Discord refuses as webhook usernames ("clyde", "discord" in any case): the name is
made safe and the persona still speaks under it; where Discord refuses it even so, the persona speaks
as the bot with its name on the message, and no turn is lost (the loopback REST fake applies
Discord's name rule, through discord.py's own HTTP client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from adapters.discord.delivery.webhooks import USERNAME_LIMIT, webhook_username
from bot.config import ConfigError, load_config
from core.events import TurnCompleted
from testkit.config import CONFIG_PATH
from testkit.discord_world import Arena, arena

WEBHOOK_POST = r"/webhooks/\d+/[^/]+"
ZERO_WIDTH = "\u200d"


def renamed() -> dict[str, Any]:
    """Every persona of the shipped cast with a name Discord refuses for webhooks."""
    cast = yaml.safe_load(CONFIG_PATH.read_text(encoding="utf-8"))["personas"]
    return {key: {**persona, "name": f"Clyde {persona['name']} of Discord"} for key, persona in cast.items()}


async def turns(world: Arena, debate_id: str) -> list[TurnCompleted]:
    return [e for e in await world.rt.store.events(debate_id) if isinstance(e, TurnCompleted)]


async def test_a_reserved_word_in_a_persona_name_is_defused_for_the_webhook(tmp_path: Path) -> None:
    async with arena(tmp_path, personas=renamed()) as world:
        ran = await world.run()
        done = await turns(world, ran.handle.debate_id)
        assert len(done) >= 2
        posts = world.lb.api.sent("POST", WEBHOOK_POST)
        assert [p.status for p in posts] == [200] * len(done)
        shown = [m for m in world.lb.api.in_channel(ran.thread.id) if m.get("webhook_id")]
        names = [m["author"]["username"] for m in shown]
        assert [n.replace(ZERO_WIDTH, "") for n in names] == [t.speaker.name for t in done]
        assert all("clyde" not in n.casefold() and "discord" not in n.casefold() for n in names)


async def test_a_name_refused_even_so_speaks_as_the_bot_and_no_turn_is_lost(tmp_path: Path) -> None:
    async with arena(tmp_path, personas=renamed()) as world:
        world.lb.api.refuse_names("clyde")  # as if Discord read through the zero-width joiner
        ran = await world.run()
        done = await turns(world, ran.handle.debate_id)
        speakers = {t.speaker.name for t in done}
        assert len(done) >= 2
        messages = world.lb.api.in_channel(ran.thread.id)
        assert [m for m in messages if m.get("webhook_id")] == []
        authored = [e for m in messages for e in m["embeds"] if e.get("author")]
        assert [e["author"]["name"] for e in authored] == [t.speaker.name for t in done]
        assert all(t.text in e["description"] for t, e in zip(done, authored, strict=True))
        # each persona's name is tried once as a webhook username, then it speaks as the bot
        refused = [p for p in world.lb.api.sent("POST", WEBHOOK_POST) if p.status == 400]
        assert len(refused) == len(speakers)


def test_a_safe_name_reads_the_same_and_fits_discords_length() -> None:
    assert webhook_username("Basil Thorne") == "Basil Thorne"
    assert webhook_username("CLYDE the discordant") == f"C{ZERO_WIDTH}LYDE the d{ZERO_WIDTH}iscordant"
    long = webhook_username("Discord " * 20)
    assert len(long) <= USERNAME_LIMIT and "discord" not in long.casefold()


def test_a_webhook_name_discord_would_refuse_is_refused_in_the_config() -> None:
    with pytest.raises(ConfigError, match=r'webhook_name.*refuses webhook names containing "discord"'):
        load_config(CONFIG_PATH, overrides={"discord": {"webhook_name": "Rostra for Discord"}})
