"""Configuration: the shipped file, env overrides, secrets only from the environment, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, Secrets, load_config
from bot.logging import SecretRedactor
from tests.helpers import CONFIG_PATH


def test_the_shipped_config_has_a_full_cast_and_arena_defaults() -> None:
    config = load_config(CONFIG_PATH)
    assert len(config.personas) >= 8
    for persona in config.personas.values():
        assert persona.name and persona.emoji and persona.voice and persona.habits
        assert persona.avatar_url and persona.avatar_url.startswith("https://")
    arena = config.formats.arena
    assert len(arena.pool) == 5 and arena.duration == 300 and arena.exchanges_per_round == 3
    assert config.model.temperature_for("observer") == 0.2


def test_an_env_variable_overrides_one_key_and_keeps_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROSTRA_MODEL__DEFAULT", "scripted")
    monkeypatch.setenv("ROSTRA_FORMATS__ARENA__DURATION", "90")
    monkeypatch.setenv("ROSTRA_STORAGE__URL", "sqlite:///data/rostra.db")
    config = load_config(CONFIG_PATH)
    assert config.model.default == "scripted"
    assert config.model.max_tokens["turn"] == 600  # the rest of the section comes from the file
    assert config.formats.arena.duration == 90 and config.formats.arena.opposition == "vera"
    assert config.storage.url == "sqlite:///data/rostra.db"


def test_a_script_makes_every_role_scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ROSTRA_MODEL__SCRIPT", str(tmp_path / "s.yaml"))
    config = load_config(CONFIG_PATH)
    assert {config.model.model_for(r) for r in ("proposition", "observer", "moderator")} == {"scripted"}


def test_secrets_come_from_the_environment_and_never_print(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret")
    secrets = Secrets()
    assert secrets.anthropic_api_key is not None
    assert "sk-ant-very-secret" not in repr(secrets) and "sk-ant-very-secret" not in str(secrets)
    assert secrets.values() == ["sk-ant-very-secret"]


def test_secrets_are_not_accepted_from_the_config_file(tmp_path: Path) -> None:
    text = CONFIG_PATH.read_text(encoding="utf-8") + "\nanthropic_api_key: sk-in-a-file\n"
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="anthropic_api_key"):
        load_config(tmp_path / "c.yaml")


def test_the_log_redactor_hides_secrets() -> None:
    import logging

    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "calling with key %s", ("sk-ant-very-secret",), None
    )
    SecretRedactor(["sk-ant-very-secret"]).filter(record)
    assert record.getMessage() == "calling with key ***"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("formats:\n  arena:\n    pool: [ada, nobody]\n    opposition: vera\n    moderator: sol\n", "nobody"),
        ("limits:\n  max_rounds: 0\n", "limits.max_rounds"),
        ("model: [not, a, mapping]\n", "model"),
    ],
)
def test_bad_config_gives_one_clear_error(tmp_path: Path, change: str, message: str) -> None:
    import yaml

    data = yaml.safe_load(CONFIG_PATH.read_text(encoding="utf-8"))
    data.update(yaml.safe_load(change))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path / "c.yaml")


def test_a_missing_config_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
