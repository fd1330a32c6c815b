"""`rostra --version`: the installed package's version, and the Python running it."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version


def rostra_version() -> str:
    try:
        return version("rostra")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def version_line() -> str:
    return f"rostra {rostra_version()} (Python {platform.python_version()})"
