"""The configuration tests and benchmarks run on: the repository's config.yaml with a temporary
database and the scripted model (real files, nothing mocked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bot.config import Config, load_config

REPO = Path(__file__).resolve().parent.parent
CONFIG_PATH = REPO / "config.yaml"


def write_script(tmp_path: Path, script: dict[str, Any], name: str = "script.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    return path


def make_config(tmp_path: Path, **overrides: Any) -> Config:
    """The repo's config.yaml with a temp database and the scripted model (overridable)."""
    base: dict[str, Any] = {
        "storage": {"url": f"sqlite:///{tmp_path / 'rostra.db'}"},
        "model": {"default": "scripted", "roles": {}, "latency": 0.05},
    }
    for section, values in overrides.items():
        if isinstance(values, dict) and isinstance(base.get(section), dict):
            base[section] = {**base[section], **values}
        else:
            base[section] = values
    return load_config(CONFIG_PATH, overrides=base)
