"""The `discord:` section of config.yaml."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class DiscordSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    streaming: bool = Field(True, description="stream turns by editing messages; off posts whole turns")
    edit_interval: float = Field(1.5, ge=0.0, description="minimum seconds between edits of one message")
    dev_guild_id: int | None = Field(None, description="sync commands to this guild only (instant)")
    starter_roles: list[str] = Field(
        default_factory=list,
        description="role names or ids allowed to start and stop debates, besides Manage Threads holders;"
        " empty means anyone may",
    )
    thread_archive_minutes: int = Field(1440, description="auto-archive for debate threads")
