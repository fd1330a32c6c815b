"""Config sections for operating Rostra: the metrics/health port and tracing."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class MetricsSettings(BaseModel):
    """`/metrics` (Prometheus), `/healthz` and `/readyz` on one HTTP port; off while `port` is unset."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    port: int | None = Field(None, ge=0, le=65535, description="0: any free port (tests)")
    host: str = Field(
        "127.0.0.1",
        description="loopback unless opened on purpose: the endpoints carry no authentication",
    )


class TracingSettings(BaseModel):
    """OpenTelemetry spans for debates, turns, votes, model calls and platform deliveries."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    enabled: bool = False
    exporter: Literal["otlp", "console"] = "otlp"
    endpoint: str | None = Field(None, description="OTLP/HTTP endpoint (default: the exporter's own)")
    service_name: str = "rostra"
    include_text: bool = Field(False, description="put prompts and replies on model-call spans")
