"""Configuration: `config.yaml`, overridden by `ROSTRA_<SECTION>__<KEY>` environment variables.

Secrets (API keys, bot tokens) come only from the environment and are held as `SecretStr`, so they
never appear in reprs or logs.
"""

from __future__ import annotations

import json
import os
import re
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, SettingsError

from adapters.discord.settings import DiscordSettings
from adapters.pictures.settings import ResultsSettings
from adapters.slack.settings import SlackSettings
from bot.gctune import GcSettings
from bot.ops_settings import MetricsSettings, TracingSettings
from core.localfiles import LocalFileError, read_local_yaml
from core.models import Persona
from core.settings import (
    ContextSettings,
    CoreSettings,
    FormatsSettings,
    LimitsSettings,
    ModelSettings,
    StorageSettings,
)

CONFIG_ENV = "ROSTRA_CONFIG"
_YAML_DATA: ContextVar[dict[str, Any] | None] = ContextVar("rostra_yaml_data", default=None)


class ConfigError(Exception):
    """The configuration cannot be loaded; the message says where and why."""


class LoggingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    level: str = "INFO"
    verbose: list[str] = Field(
        default_factory=list,
        description="loggers kept below WARNING though quiet by default (e.g. discord.webhook)",
    )
    format: Literal["text", "json"] = "text"

    @field_validator("level")
    @classmethod
    def _a_logging_level(cls, value: str) -> str:
        name = value.strip().upper()
        if name not in LEVELS:
            raise ValueError(f"must be one of {', '.join(LEVELS)}, not {value!r}")
        return name


LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
"""The logging levels `logging.level` takes."""


class RuntimeSettings(BaseModel):
    """How the process itself runs (not what a debate does)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

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
    slack_client_id: SecretStr | None = None  # with the client secret: many workspaces (OAuth install)
    slack_client_secret: SecretStr | None = None
    rostra_secret_key: SecretStr | None = None  # seals stored Slack installations (Fernet keys, first seals)

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        """`KEY=` (as .env.example ships it) or spaces mean "not set"; stray spaces around a key go."""
        if isinstance(value, str):
            return value.strip() or None
        return value

    def values(self) -> list[str]:
        """Every secret that is set (each field of this class is one), for redaction."""
        found = [getattr(self, name) for name in type(self).model_fields]
        return [s.get_secret_value() for s in found if isinstance(s, SecretStr) and s.get_secret_value()]


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
    model_config = SettingsConfigDict(
        env_prefix="ROSTRA_", env_nested_delimiter="__", extra="forbid", allow_inf_nan=False
    )

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
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)
    results: ResultsSettings = Field(default_factory=ResultsSettings)

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
            storage=self.storage,
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


def env_variable_for(loc: tuple[int | str, ...]) -> str | None:
    """The `ROSTRA_*` variable that set the value at `loc` (or a section holding it), if one did."""
    names = {name.upper(): name for name in os.environ}
    parts = [str(p).upper() for p in loc]
    for end in range(len(parts), 0, -1):
        name = "ROSTRA_" + "__".join(parts[:end])
        if name in names:
            return names[name]
    return None


def _file_and_overrides(file: Path) -> str:
    """`config.yaml`, or `config.yaml (with ROSTRA_X)` when variables may have caused a whole-config error."""
    own = {CONFIG_ENV, "ROSTRA_INSTANCE"}
    variables = sorted(n for n in os.environ if n.upper().startswith("ROSTRA_") and n.upper() not in own)
    return f"{file} (with {', '.join(variables)})" if variables else str(file)


def load_config(path: str | Path | None = None, *, overrides: dict[str, Any] | None = None) -> Config:
    """Load config.yaml (+ env overrides, + `overrides` on top) and check it as a whole."""
    file = Path(path).expanduser() if path is not None else default_config_path()
    if not file.exists() and not file.is_symlink():
        raise ConfigError(f"Config file not found: {file}")
    try:  # only a regular file, bounded (core.localfiles); invalid YAML is one line
        data = read_local_yaml(file, what="config file") or {}
    except LocalFileError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file} must hold a mapping of sections (personas, formats, model, ...)")

    token = _YAML_DATA.set(_persona_ids(data))
    try:
        config = Config(**(overrides or {}))
        config.core()  # cross-checks (cast refers to personas, ...)
    except SettingsError as exc:  # a ROSTRA_* variable that should hold JSON does not
        raise ConfigError(_unparsed_variable(exc)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        variable = env_variable_for(first["loc"])
        blamed = f"environment variable {variable}" if variable else _file_and_overrides(file)
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{blamed}: {where}: {message}" if where else f"{blamed}: {message}") from None
    finally:
        _YAML_DATA.reset(token)
    if config.model.script:  # a script that cannot be read is a start-up error, not a traceback later
        from core.errors import ModelConfigError
        from core.llm.scripted import Script

        try:
            Script.load(config.model.script)
        except ModelConfigError as exc:
            raise ConfigError(f"model.script: {exc}") from None
    return config


def _unparsed_variable(exc: SettingsError) -> str:
    """One line naming the `ROSTRA_*` variable whose value could not be parsed as JSON."""
    found = re.search(r'field "([^"]+)"', str(exc))
    prefix = f"ROSTRA_{found.group(1)}".upper() if found else "ROSTRA_"
    for name, value in sorted(os.environ.items()):
        upper = name.upper()
        if upper != prefix and not upper.startswith(prefix + "__"):
            continue
        if not value.lstrip().startswith(("{", "[")):
            continue
        try:
            json.loads(value)
        except ValueError as error:
            where = getattr(error, "pos", None)
            at = f" at character {where + 1}" if isinstance(where, int) else ""
            return f"environment variable {name}: not valid JSON{at}"
    return f"environment variable {prefix}…: its value cannot be read ({exc})"


def load_secrets() -> Secrets:
    return Secrets()
