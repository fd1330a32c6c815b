"""Logging to stderr, with every known secret redacted from every record.

Besides the configured secrets, tokens that only exist at run time are redacted by their shape:
the token part of a webhook or interaction URL (`/webhooks/<id>/<token>`), and a `token` field
in a logged payload (an interaction's token).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Sequence

from bot.json_logs import JsonFormatter

_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

_TOKEN_SHAPES = (
    re.compile(r"(/(?:webhooks|interactions)/\d+/)[A-Za-z0-9_.\-]{20,}"),
    re.compile(r"""(["']token["']\s*:\s*["'])[^"']+"""),
)
QUIET_LOGGERS = ("discord.gateway", "discord.http", "discord.webhook", "aiohttp.access", "httpx", "httpx2")
"""Chatty below WARNING (discord.py's webhook and HTTP loggers print URLs that carry tokens)."""


def redact_token_shapes(text: str) -> str:
    for shape in _TOKEN_SHAPES:
        text = shape.sub(r"\1***", text)
    return text


class SecretRedactor(logging.Filter):
    """Replaces secret values anywhere in a formatted record with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return redact_token_shapes(text)

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


def setup_logging(
    level: str = "INFO", *, secrets: Iterable[str] = (), verbose: Sequence[str] = (), fmt: str = "text"
) -> None:
    """Configure the root logger once: stderr, one line per record (or one JSON object), secrets redacted.

    The loggers in QUIET_LOGGERS stay at WARNING whatever the level, unless named in `verbose`
    (`logging.verbose` in config) — and even then their tokens are redacted.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(_FORMAT))
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
