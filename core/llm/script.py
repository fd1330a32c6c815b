"""A rehearsal script: replies by role or persona, read from YAML and checked before anything runs.

A script maps a role name, `persona:<id>` or `persona:<id>:<role>` to a list of replies; the most
specific key wins. Each list is consumed in order and its last entry repeats. A role's list is
shared by every persona in that role, in call order. A reply is text (a spoken turn), a mapping (a
structured reply), `{say: text, delay: seconds}` or `{error: message}`; a delay must be a finite
number of seconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import ModelConfigError
from core.localfiles import LocalFileError, read_local_yaml

ScriptItem = str | dict[str, Any]

CONTROL_KEYS = {"error", "delay", "say"}


class ScriptedFailure(RuntimeError):
    """A failure the script asked for."""


class Script:
    """Replies by key, with one shared cursor per key (per debate)."""

    def __init__(self, entries: Mapping[str, list[ScriptItem]] | None = None) -> None:
        self.entries: dict[str, list[ScriptItem]] = {k: list(v) for k, v in (entries or {}).items()}
        self.cursors: dict[str, int] = {}

    @classmethod
    def load(cls, path: str | Path) -> Script:
        p = Path(path).expanduser()
        if not p.exists() and not p.is_symlink():
            raise ModelConfigError(f"Script file not found: {p}")
        try:  # only a regular file, bounded (core.localfiles); invalid YAML is one line
            raw = read_local_yaml(p, what="script file")
        except LocalFileError as exc:
            raise ModelConfigError(str(exc)) from None
        return cls.parse(raw, source=str(p))

    @classmethod
    def parse(cls, raw: Any, *, source: str = "script") -> Script:
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise ModelConfigError(f"{source}: a script maps roles or persona:<id> to lists of replies")
        entries: dict[str, list[ScriptItem]] = {}
        for key, value in raw.items():
            items = value if isinstance(value, list) else [value]
            if not items:
                raise ModelConfigError(f"{source}: {key!r} has an empty list of replies")
            for item in items:
                if not isinstance(item, str | dict):
                    raise ModelConfigError(
                        f"{source}: replies under {key!r} must be text or mappings, not {item!r}"
                    )
                if isinstance(item, dict):
                    _check_controls(item, f"{source}: a reply under {key!r}")
            entries[str(key)] = items
        return cls(entries)

    def copy(self) -> Script:
        """A fresh cursor set over the same replies (one per debate)."""
        return Script(self.entries)

    def key_for(self, persona_id: str, role: str) -> str | None:
        for key in (f"persona:{persona_id}:{role}", f"persona:{persona_id}", role):
            if key in self.entries:
                return key
        return None

    def next(self, persona_id: str, role: str) -> ScriptItem | None:
        key = self.key_for(persona_id, role)
        if key is None:
            return None
        items = self.entries[key]
        i = self.cursors.get(key, 0)
        self.cursors[key] = i + 1
        return items[min(i, len(items) - 1)]


_MAX_DELAY = 24 * 3600.0
_ASCII_BYTES = bytes(range(128))


def count_tokens(text: str) -> int:
    """The rehearsal's token count, shaped like a real tokenizer's: about four ASCII characters a
    token, and a token for each other character (CJK and the like run near one a character)."""
    if text.isascii():
        return len(text) // 4
    encoded = text.encode("utf-8", "surrogatepass")
    ascii_chars = len(encoded) - len(encoded.translate(None, _ASCII_BYTES))
    return ascii_chars // 4 + (len(text) - ascii_chars)


def _check_controls(item: dict[str, Any], where: str) -> None:
    """A reply's `delay` is a finite, non-negative number of seconds (no `.inf`, no `.nan`: they
    cannot be stored or waited out), and `say`/`error` are text."""
    if "delay" in item:
        delay = item["delay"]
        if isinstance(delay, bool) or not isinstance(delay, int | float) or not math.isfinite(delay):
            raise ModelConfigError(f"{where}: delay must be a number of seconds, not {delay!r}")
        if not 0 <= delay <= _MAX_DELAY:
            raise ModelConfigError(f"{where}: delay must be between 0 and {_MAX_DELAY:.0f} seconds")
    for name in ("say", "error"):
        if name in item and not isinstance(item[name], str):
            raise ModelConfigError(f"{where}: {name} must be text, not {item[name]!r}")
