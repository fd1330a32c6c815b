"""The suite always collects at least this: the package imports and the shipped config loads."""

from bot.config import load_config
from tests.helpers import CONFIG_PATH


def test_shipped_config_loads_with_a_cast_of_at_least_eight() -> None:
    config = load_config(CONFIG_PATH)
    assert len(config.personas) >= 8
    names = {p.name for p in config.personas.values()}
    assert len(names) == len(config.personas)
