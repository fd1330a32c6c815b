"""The debate formats, by name."""

from core.formats.arena import Arena
from core.formats.base import DebateContext, DebateFormat, Outcome

FORMATS: dict[str, type[DebateFormat]] = {Arena.name: Arena}

__all__ = ["FORMATS", "Arena", "DebateContext", "DebateFormat", "Outcome"]
