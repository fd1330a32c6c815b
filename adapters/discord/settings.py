"""The `discord:` section of config.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ARCHIVE_MINUTES = (60, 1440, 4320, 10080)


class DiscordSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    api_url: str | None = Field(
        None, description="REST API base URL (a proxy's, or a test's); null: Discord's"
    )
    gateway_url: str | None = Field(None, description="gateway URL (a proxy's, or a test's); null: Discord's")
    streaming: bool = Field(True, description="stream turns by editing messages; off posts whole turns")
    edit_interval: float = Field(1.5, ge=0.0, description="minimum seconds between edits of one message")
    dev_guild_id: int | None = Field(None, description="sync commands to this guild only (instant)")
    application_id: int | None = Field(
        None, description="for `rostra discord-invite`; read from DISCORD_TOKEN when unset"
    )
    starter_roles: list[str] = Field(
        default_factory=list,
        description="role names or ids allowed to start and stop debates, besides Manage Threads holders;"
        " empty means anyone may",
    )
    thread_archive_minutes: int = Field(1440, description="auto-archive for debate threads")
    webhook_name: str = Field(
        "Rostra", min_length=1, max_length=80, description="name of the webhook personas speak through"
    )
    ballot: Literal["reactions", "buttons"] = Field(
        "reactions",
        description="how people vote on vote cards: reactions (live, the default) or buttons (one vote"
        " each, private confirmation, no Add Reactions needed)",
    )

    shard_id: int | None = Field(
        None, ge=0, description="this process's shard; with shard_count, several processes split the servers"
    )
    shard_count: int | None = Field(None, ge=1, description="how many shards in all (one per process)")

    @model_validator(mode="after")
    def _shards_together(self) -> DiscordSettings:
        if (self.shard_id is None) != (self.shard_count is None):
            raise ValueError("discord.shard_id and discord.shard_count go together (set both or neither)")
        if self.shard_id is not None and self.shard_count is not None and self.shard_id >= self.shard_count:
            raise ValueError(f"discord.shard_id must be below shard_count ({self.shard_count})")
        return self

    @field_validator("webhook_name")
    @classmethod
    def _discord_webhook_name(cls, value: str) -> str:
        for word in ("clyde", "discord"):
            if word in value.casefold():
                raise ValueError(f'Discord refuses webhook names containing "{word}"')
        return value

    @field_validator("thread_archive_minutes")
    @classmethod
    def _discord_archive_choice(cls, value: int) -> int:
        if value not in ARCHIVE_MINUTES:
            choices = ", ".join(str(m) for m in ARCHIVE_MINUTES)
            raise ValueError(f"must be one of {choices} (Discord's auto-archive choices)")
        return value
