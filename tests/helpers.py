"""Shared test helpers: a recording sink and a config builder (real files, scripted model)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from bot.config import Config, load_config
from core.events import Event

REPO = Path(__file__).resolve().parent.parent
CONFIG_PATH = REPO / "config.yaml"


class RecordingSink:
    """Keeps every event it is given; `on` hooks let a test react (e.g. vote when a window opens)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.hooks: list[Callable[[Event], Any]] = []

    async def emit(self, event: Event) -> None:
        self.events.append(event)
        for hook in self.hooks:
            result = hook(event)
            if asyncio.iscoroutine(result):
                await result

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


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
