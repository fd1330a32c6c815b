"""asyncpg's pool warnings after a Postgres restart reach the terminal as one line, not a traceback."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from bot.logging import setup_logging


@pytest.fixture
def terminal() -> Iterator[io.StringIO]:
    """What `rostra` writes to stderr (restored afterwards)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    setup_logging("WARNING")
    written = io.StringIO()
    for handler in root.handlers:
        assert isinstance(handler, logging.StreamHandler)
        handler.setStream(written)
    try:
        yield written
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)


def test_a_pool_warning_is_one_line_naming_the_error(terminal: io.StringIO) -> None:
    try:
        raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 5432)")
    except ConnectionRefusedError:
        logging.getLogger("asyncpg.pool").warning(
            "Failed to restore the pool connection floor", exc_info=True
        )
    try:
        raise RuntimeError("ours")
    except RuntimeError:
        logging.getLogger("core.session.run").exception("debate x failed")
    err = terminal.getvalue()
    pool = [line for line in err.splitlines() if "asyncpg.pool" in line]
    assert len(pool) == 1 and "ConnectionRefusedError" in pool[0] and "Connect call failed" in pool[0]
    assert err.count("Traceback") == 1  # our own errors keep theirs (for the log), asyncpg's do not
