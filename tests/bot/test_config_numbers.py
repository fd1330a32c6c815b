"""Numbers in config and environment are checked with one line each: no NaN, no infinity, no
negative token caps, temperatures within what providers take."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.config import ConfigError, load_config
from core.errors import SpecError
from core.formats.arena import ArenaOptions
from core.spec import parse_options
from tests.helpers import REPO

CONFIG_PATH = REPO / "config.yaml"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"model": {"max_tokens": {"turn": -5}}}, "max_tokens"),
        ({"model": {"temperature": {"council": float("nan")}}}, "temperature"),
        ({"model": {"call_timeout": float("inf")}}, "call_timeout"),
        ({"limits": {"max_cost_per_debate": float("nan")}}, "max_cost_per_debate"),
    ],
)
def test_a_number_that_cannot_hold_is_refused_in_one_line(
    tmp_path: Path, change: dict[str, dict[str, object]], named: str
) -> None:
    data = yaml.safe_load(CONFIG_PATH.read_text(encoding="utf-8"))
    for section, values in change.items():
        data[section] = {**data.get(section, {}), **values}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError, match=named) as refused:
        load_config(path)
    assert "Traceback" not in str(refused.value)


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_a_format_option_must_be_finite(value: float) -> None:
    with pytest.raises(SpecError, match="duration"):
        parse_options(ArenaOptions, {}, {"duration": value})
