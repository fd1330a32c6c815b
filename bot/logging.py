"""Logging to stderr, with every known secret redacted from every record, at every level.

The rule itself is `core.redaction`: the environment's secrets and the installations' tokens the
process holds, and every known token shape (Slack, Discord, Anthropic, OAuth codes, webhook URLs).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Sequence

from bot.json_logs import JsonFormatter
from core.redaction import redact

_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

QUIET_LOGGERS = (
    "discord.gateway",
    "discord.http",
    "discord.webhook",
    "aiohttp.access",
    "httpx",
    "httpx2",
    "slack_sdk",
    "slack_bolt",
    "aiosqlite",
    "asyncpg",
)
"""Chatty below WARNING: discord.py's webhook and HTTP loggers print URLs that carry tokens, slack_sdk
logs whole Web API responses (`oauth.v2.access` carries a bot token), aiosqlite logs every statement
with its parameters."""


class SecretRedactor(logging.Filter):
    """Replaces secret values anywhere in a formatted record with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = tuple(secrets)

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self._redact(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


ONE_LINE_LOGGERS = ("asyncpg",)
"""Libraries whose warnings carry tracebacks of faults the bot already handles (asyncpg's pool
after a Postgres restart): their records keep one line, the error named, no traceback."""


class OneLine(logging.Filter):
    """Folds the traceback of a library's record into one line: `message (Error: detail)`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.name.split(".")[0] in ONE_LINE_LOGGERS:
            error = record.exc_info[1]
            if error is not None:
                record.msg, record.args = f"{record.getMessage()} ({type(error).__name__}: {error})", None
            record.exc_info, record.exc_text = None, None
        return True


def setup_logging(
    level: str = "INFO", *, secrets: Iterable[str] = (), verbose: Sequence[str] = (), fmt: str = "text"
) -> None:
    """Configure the root logger once: stderr, one line per record (or one JSON object), secrets redacted.

    The loggers in QUIET_LOGGERS stay at WARNING whatever the level, unless named in `verbose`
    (`logging.verbose` in config) — and even then their tokens are redacted.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(_FORMAT))
    handler.addFilter(OneLine())
    handler.addFilter(SecretRedactor(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in QUIET_LOGGERS:
        quiet = noisy not in verbose
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level) if quiet else logging.NOTSET)
    # agno's own records (it re-logs every model error) only when debugging
    logging.getLogger("agno").propagate = root.level <= logging.DEBUG
