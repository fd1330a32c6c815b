"""The `results` section of config: whether debates end with a results picture."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ResultsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    picture: bool = Field(
        True,
        description="draw the results picture with the closing card and the terminal's closing table",
    )
