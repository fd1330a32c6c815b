"""Logging to stderr, with every known secret redacted from every record."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

from bot.json_logs import JsonFormatter

_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


class SecretRedactor(logging.Filter):
    """Replaces secret values anywhere in a formatted record with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        message = record.getMessage()
        redacted = message
        for secret in self._secrets:
            redacted = redacted.replace(secret, "***")
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        exc_text = record.exc_text
        if exc_text:
            for secret in self._secrets:
                exc_text = exc_text.replace(secret, "***")
            record.exc_text = exc_text
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def setup_logging(level: str = "INFO", *, secrets: Iterable[str] = (), fmt: str = "text") -> None:
    """Configure the root logger once: stderr, one line per record (or one JSON object), secrets redacted."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(_FORMAT))
    handler.addFilter(SecretRedactor(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in ("discord.gateway", "discord.http", "aiohttp.access", "httpx", "httpx2"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    # agno's own records (it re-logs every model error) only when debugging
    logging.getLogger("agno").propagate = root.level <= logging.DEBUG
