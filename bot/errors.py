"""Errors of the command line, in a module of their own so every `rostra` subcommand can raise them
without importing the parser that catches them."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input: printed as one line, exit code 2."""
