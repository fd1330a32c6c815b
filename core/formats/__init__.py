"""The debate formats, by name."""

from core.formats.arena import Arena
from core.formats.base import DebateContext, DebateFormat, Outcome
from core.formats.council import Council
from core.formats.oxford import Oxford
from core.formats.panel import Panel

FORMATS: dict[str, type[DebateFormat]] = {
    Arena.name: Arena,
    Council.name: Council,
    Oxford.name: Oxford,
    Panel.name: Panel,
}

__all__ = ["FORMATS", "Arena", "Council", "DebateContext", "DebateFormat", "Outcome", "Oxford", "Panel"]
