"""What a front end needs from the running bot. `bot.runtime.Runtime` satisfies it.

Adapters import only core and this protocol (never `bot`), so the dependency rule holds:
bot → adapters → core.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import SecretStr

from adapters.discord.settings import DiscordSettings
from adapters.pictures.settings import ResultsSettings
from adapters.slack.settings import SlackSettings
from core.admission import Admission
from core.manager import DebateManager
from core.ports import Store
from core.recovery import Recovery
from core.settings import CoreSettings


class HostConfig(Protocol):
    @property
    def discord(self) -> DiscordSettings: ...

    @property
    def slack(self) -> SlackSettings: ...

    @property
    def results(self) -> ResultsSettings: ...


class HostSecrets(Protocol):
    @property
    def discord_token(self) -> SecretStr | None: ...

    @property
    def slack_bot_token(self) -> SecretStr | None: ...

    @property
    def slack_signing_secret(self) -> SecretStr | None: ...

    @property
    def slack_app_token(self) -> SecretStr | None: ...

    @property
    def slack_client_id(self) -> SecretStr | None: ...

    @property
    def slack_client_secret(self) -> SecretStr | None: ...


class Host(Protocol):
    """The bot as a front end sees it: its settings and secrets, and the engine's parts."""

    @property
    def config(self) -> HostConfig: ...

    @property
    def core(self) -> CoreSettings: ...

    @property
    def secrets(self) -> HostSecrets: ...

    @property
    def store(self) -> Store: ...

    @property
    def manager(self) -> DebateManager: ...

    @property
    def admission(self) -> Admission: ...

    @property
    def recovery(self) -> Recovery: ...
