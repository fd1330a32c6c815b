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
    (tmp_path / "s.yaml").write_text("{}\n", encoding="utf-8")
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


def test_every_secret_the_environment_holds_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config import load_secrets

    names = ["ANTHROPIC_API_KEY", "TAVILY_API_KEY", "DISCORD_TOKEN", "SLACK_BOT_TOKEN"]
    names += ["SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"]
    for i, name in enumerate(names):
        monkeypatch.setenv(name, f"secret-value-{i}-abcdef")
    assert sorted(load_secrets().values()) == sorted(f"secret-value-{i}-abcdef" for i in range(len(names)))


def test_webhook_and_interaction_tokens_are_redacted_by_their_shape() -> None:
    import logging

    token = "aW50ZXJhY3Rpb246MTIzNDU2Nzg5OkxvbmdUb2tlblRleHQ"
    for text in (
        f"POST https://discord.com/api/v10/webhooks/1234567890/{token}?wait=1 has returned 200",
        f"POST /interactions/987654321/{token}/callback",
        f"payload {{'type': 2, 'token': '{token}', 'id': '1'}}",
        f'payload {{"token": "{token}"}}',
    ):
        record = logging.LogRecord("discord.webhook.async_", logging.DEBUG, __file__, 1, text, None, None)
        SecretRedactor([]).filter(record)
        assert token not in record.getMessage()
        assert "***" in record.getMessage()


def test_discord_webhook_logs_stay_quiet_below_warning_unless_asked() -> None:
    import logging

    from bot.logging import setup_logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        setup_logging("DEBUG")
        assert not logging.getLogger("discord.webhook.async_").isEnabledFor(logging.DEBUG)
        assert logging.getLogger("discord.webhook.async_").isEnabledFor(logging.WARNING)
        setup_logging("DEBUG", verbose=["discord.webhook"])
        assert logging.getLogger("discord.webhook.async_").isEnabledFor(logging.DEBUG)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.getLogger("discord.webhook").setLevel(logging.NOTSET)
