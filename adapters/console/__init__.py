"""Terminal front end (Rich)."""

from adapters.console.render import ConsoleView, Piece
from adapters.console.sink import ConsoleSink, PipeSafeConsole, parse_choice

__all__ = ["ConsoleSink", "ConsoleView", "Piece", "PipeSafeConsole", "parse_choice"]
