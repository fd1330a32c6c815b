"""Several `rostra discord` processes split the servers: discord.py's sharding, from config or env."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.discord import create_bot
from bot.config import ConfigError, Secrets
from bot.runtime import Runtime
from tests.helpers import make_config


async def test_shard_id_and_count_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROSTRA_DISCORD__SHARD_ID", "1")
    monkeypatch.setenv("ROSTRA_DISCORD__SHARD_COUNT", "2")
    config = make_config(tmp_path)
    async with Runtime(config, secrets=Secrets()) as rt:
        bot = create_bot(rt)
        try:
            # what discord.py sends in IDENTIFY, so Discord sends this process its half of the servers
            assert (bot.shard_id, bot.shard_count) == (1, 2)
        finally:
            await bot.close()


async def test_without_shards_one_process_takes_every_server(tmp_path: Path) -> None:
    async with Runtime(make_config(tmp_path), secrets=Secrets()) as rt:
        bot = create_bot(rt)
        try:
            assert (bot.shard_id, bot.shard_count) == (None, None)
        finally:
            await bot.close()


@pytest.mark.parametrize(
    ("discord", "message"),
    [
        ({"shard_id": 0}, "go together"),
        ({"shard_id": 2, "shard_count": 2}, "below shard_count"),
    ],
)
def test_bad_shard_settings_are_refused_clearly(
    tmp_path: Path, discord: dict[str, int], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        make_config(tmp_path, discord=discord)
