"""runtime.gc reaches the collector: thresholds set and start-up frozen, from config or env."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load_config
from bot.gctune import tune_gc
from tests.helpers import CONFIG_PATH


@pytest.fixture(autouse=True)
def restore_gc() -> Iterator[None]:
    before = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_the_configured_thresholds_and_freeze_reach_the_collector() -> None:
    config = load_config(CONFIG_PATH, overrides={"runtime": {"gc": {"gen0": 12_345, "gen1": 7, "gen2": 3}}})
    assert gc.get_freeze_count() == 0
    tune_gc(config.runtime.gc)
    assert gc.get_threshold() == (12_345, 7, 3)
    assert gc.get_freeze_count() > 1000  # modules, classes and settings: out of every collection


def test_disabled_tuning_leaves_python_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROSTRA_RUNTIME__GC__ENABLED", "false")
    gc.set_threshold(700, 10, 10)
    tune_gc(load_config(CONFIG_PATH).runtime.gc)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_freeze_can_be_turned_off_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROSTRA_RUNTIME__GC__FREEZE", "false")
    config = load_config(CONFIG_PATH)
    tune_gc(config.runtime.gc)
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == (config.runtime.gc.gen0, config.runtime.gc.gen1, config.runtime.gc.gen2)


def test_a_nonsense_threshold_is_refused_with_its_key() -> None:
    with pytest.raises(ConfigError, match=r"runtime\.gc\.gen0"):
        load_config(CONFIG_PATH, overrides={"runtime": {"gc": {"gen0": 5}}})


def test_the_demo_tunes_the_collector_from_its_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ROSTRA_STORAGE__URL", f"sqlite:///{tmp_path / 'rostra.db'}")
    monkeypatch.setenv("ROSTRA_RUNTIME__GC__GEN0", "23456")
    code = main(["demo", "Should cities ban cars?", "--fast", "--seed", "7"])
    assert code == 0, capsys.readouterr().err
    assert gc.get_threshold()[0] == 23_456
    assert gc.get_freeze_count() > 1000
