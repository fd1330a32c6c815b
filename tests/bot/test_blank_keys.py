"""An empty or blank key (as `.env.example` ships it) counts as unset, on every front end."""

from __future__ import annotations

import pytest

from bot.config import load_secrets


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_a_blank_key_is_no_key(monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", blank)
    monkeypatch.setenv("SLACK_BOT_TOKEN", blank)
    secrets = load_secrets()
    assert secrets.anthropic_api_key is None
    assert secrets.slack_bot_token is None


def test_spaces_around_a_key_are_not_part_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  sk-ant-padded-key  ")
    key = load_secrets().anthropic_api_key
    assert key is not None and key.get_secret_value() == "sk-ant-padded-key"
