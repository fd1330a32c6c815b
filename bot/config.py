"""Configuration: `config.yaml`, overridden by `ROSTRA_<SECTION>__<KEY>` environment variables.

Secrets (API keys, bot tokens) come only from the environment and are held as `SecretStr`, so they
never appear in reprs or logs.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from adapters.discord.settings import DiscordSettings
from adapters.slack.settings import SlackSettings
from bot.gctune import GcSettings
from core.models import Persona
from core.settings import (
    ContextSettings,
    CoreSettings,
    FormatsSettings,
    LimitsSettings,
    ModelSettings,
)

CONFIG_ENV = "ROSTRA_CONFIG"
_YAML_DATA: ContextVar[dict[str, Any] | None] = ContextVar("rostra_yaml_data", default=None)
DEFAULT_DB_URL = "sqlite:///~/.local/share/rostra/rostra.db"


class ConfigError(Exception):
    """The configuration cannot be loaded; the message says where and why."""


class StorageSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = DEFAULT_DB_URL


class LoggingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: str = "INFO"


class RuntimeSettings(BaseModel):
    """How the process itself runs (not what a debate does)."""

    model_config = ConfigDict(extra="forbid")

    gc: GcSettings = Field(default_factory=GcSettings)


class Secrets(BaseSettings):
    """Read from the environment only (never from config.yaml)."""

    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False)

    anthropic_api_key: SecretStr | None = None
    tavily_api_key: SecretStr | None = None
    discord_token: SecretStr | None = None
    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None

    def values(self) -> list[str]:
        found = [
            self.anthropic_api_key,
            self.discord_token,
            self.slack_bot_token,
            self.slack_signing_secret,
            self.slack_app_token,
        ]
        return [s.get_secret_value() for s in found if s is not None and s.get_secret_value()]


class _YamlData(PydanticBaseSettingsSource):
    """The parsed config.yaml as the lowest-priority settings source."""

    def __init__(self, settings_cls: type[BaseSettings], data: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._data = data

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._data)


class Config(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ROSTRA_", env_nested_delimiter="__", extra="forbid")

    personas: dict[str, Persona]
    formats: FormatsSettings
    resume: bool = True
    model: ModelSettings = Field(default_factory=ModelSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    discord: DiscordSettings = Field(default_factory=DiscordSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _YamlData(settings_cls, _YAML_DATA.get() or {}))

    def core(self) -> CoreSettings:
        return CoreSettings(
            personas=self.personas,
            formats=self.formats,
            model=self.model,
            limits=self.limits,
            context=self.context,
        )


def default_config_path() -> Path:
    """$ROSTRA_CONFIG, ./config.yaml, the repository's config.yaml, or the packaged copy."""
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser()
    here = Path(__file__).resolve().parent
    for candidate in (Path.cwd() / "config.yaml", here.parent / "config.yaml", here / "default_config.yaml"):
        if candidate.is_file():
            return candidate
    raise ConfigError("No config.yaml found: set ROSTRA_CONFIG or run from the project directory")


def _persona_ids(data: dict[str, Any]) -> dict[str, Any]:
    personas = data.get("personas")
    if isinstance(personas, dict):
        data = {
            **data,
            "personas": {k: ({"id": k, **v} if isinstance(v, dict) else v) for k, v in personas.items()},
        }
    return data


def load_config(path: str | Path | None = None, *, overrides: dict[str, Any] | None = None) -> Config:
    """Load config.yaml (+ env overrides, + `overrides` on top) and check it as a whole."""
    file = Path(path).expanduser() if path is not None else default_config_path()
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"Config file not found: {file}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file} must hold a mapping of sections (personas, formats, model, ...)")

    token = _YAML_DATA.set(_persona_ids(data))
    try:
        config = Config(**(overrides or {}))
        config.core()  # cross-checks (cast refers to personas, ...)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{file}: {where}: {first['msg']}") from None
    finally:
        _YAML_DATA.reset(token)
    return config


def load_secrets() -> Secrets:
    return Secrets()
