"""One redaction rule for everything the process writes to logs: secret values and token shapes.

Two kinds of secret reach a log line. Those the process holds (environment secrets, every Slack
workspace's bot token once an installation is loaded) are registered with `hold_secret` and replaced
wherever they appear. Tokens that only pass through (an OAuth code, a token in a logged Web API
response or SQL parameter, a webhook URL's token part) are caught by their published shapes.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

MASK = "***"
_MIN_SECRET = 6

_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    # Slack tokens: bot, user, app-level, configuration, refresh (xoxb-, xoxp-, xapp-, xoxe.xoxp-, …)
    (re.compile(r"\b(xox[a-z](?:\.xox[a-z])?-|xapp-)[A-Za-z0-9-]+"), r"\1" + MASK),
    # Anthropic keys, and other `sk-` keys
    (re.compile(r"\b(sk-(?:ant-)?)[A-Za-z0-9_-]{8,}"), r"\1" + MASK),
    # Discord bot tokens: base64 user id . timestamp . HMAC
    (re.compile(r"\b[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,}"), MASK),
    # the token part of a webhook or interaction URL
    (re.compile(r"(/(?:webhooks|interactions)/\d+/)[A-Za-z0-9_.\-]{20,}"), r"\1" + MASK),
    # token-like fields in logged payloads, query strings and form bodies
    (
        re.compile(
            r"""(["']?\b(?:token|access_token|bot_token|user_token|refresh_token|client_secret|"""
            r"""signing_secret|app_token)["']?\s*[:=]\s*["']?)[^"'&\s,}]+"""
        ),
        r"\1" + MASK,
    ),
    # OAuth codes (long values only: an HTTP status "code": 200 stays readable)
    (re.compile(r"""(["']?\bcode["']?\s*[:=]\s*["']?)[^"'&\s,}]{16,}"""), r"\1" + MASK),
)

_held: set[str] = set()
_held_lock = threading.Lock()
_ordered: tuple[str, ...] = ()


def hold_secret(*values: str | None) -> None:
    """Redact these values from every log line from now on (too short values are ignored)."""
    global _ordered
    fresh = {v for v in values if v and len(v.strip()) >= _MIN_SECRET}
    if not fresh - _held:
        return
    with _held_lock:
        _held.update(fresh)
        _ordered = tuple(sorted(_held, key=len, reverse=True))


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """`text` with every held secret, every secret in `extra` and every known token shape masked."""
    for secret in (*sorted((s for s in extra if len(s) >= _MIN_SECRET), key=len, reverse=True), *_ordered):
        if secret in text:
            text = text.replace(secret, MASK)
    for shape, replacement in _SHAPES:
        text = shape.sub(replacement, text)
    return text
