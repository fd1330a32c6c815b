"""A spent daily budget refuses the next /debate start privately."""

from __future__ import annotations

import pytest

from tests.adapters.discord.conftest import World

PRICE = {"input": 1000.0, "output": 1000.0, "cache_write": 1000.0, "cache_read": 1000.0}
TINY = 1e-9


@pytest.mark.rostra(model={"prices": {"scripted": PRICE}}, limits={"daily_cost_per_scope": TINY})
async def test_discord_refuses_privately_once_the_server_budget_is_spent(world: World) -> None:
    await world.start()
    assert (await world.latest()).status == "completed"  # the scripted debate ran while the command ran
    other = world.guild.create_text_channel("elsewhere")

    result = await world.start(world.bob, other)

    assert result.ephemeral and result.response is not None
    assert result.response.content.startswith("This server's daily budget of $0.0000 is spent")
    assert other.threads == []
    assert len(await world.rt.store.list_debates(50)) == 1
