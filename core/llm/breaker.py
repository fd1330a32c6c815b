"""A debate's circuit breaker on its model provider: a dead model is given up on, not worked around.

An isolated failure falls back (a stand-in line, a vote counted as keep) and the debate goes on.
But after `model.failure_limit` failures in a row from one provider, or at once when the provider
refuses the API key, every further call would fail the same way: the debate ends `failed` with the
reason instead of filling its thread with fallbacks. Recalled calls of a resumed debate count as
they did live, so a replay trips at the same place.
"""

from __future__ import annotations

import logging

from core.errors import ModelOutage

log = logging.getLogger(__name__)

KEY_REFUSED = "the model refused the API key"

_KEY_SIGNS = (
    "authentication_error",
    "invalid x-api-key",
    "invalid api key",
    "incorrect api key",
    "error code: 401",
    "status 401",
    "401 unauthorized",
)
"""How a refused key reads in a provider's error (agno passes the provider's message on as text)."""


def refuses_key(error: BaseException | str) -> bool:
    """Whether a model call failed because the provider refused the API key (HTTP 401)."""
    seen: list[BaseException | str] = []
    current: BaseException | str | None = error
    while current is not None and len(seen) < 8:
        seen.append(current)
        if isinstance(current, BaseException):
            status = getattr(current, "status_code", None)
            if status == 401 or type(current).__name__ == "AuthenticationError":
                return True
            current = current.__cause__ or current.__context__
        else:
            current = None
    return any(sign in str(item).lower() for item in seen for sign in _KEY_SIGNS)


def failed_in_a_row(count: int) -> str:
    return f"the model failed {count} times in a row"


class ModelBreaker:
    """Consecutive failures of one provider's calls in one debate; tripped once they say it is down."""

    def __init__(self, provider: str, limit: int) -> None:
        self.provider = provider
        self.limit = limit
        self.failures = 0
        self.reason: str | None = None  # set once tripped: why the debate cannot go on

    def check(self) -> None:
        """Before a call: ModelOutage once the breaker tripped (no call is made)."""
        if self.reason is not None:
            raise ModelOutage(self.reason)

    def succeeded(self) -> None:
        self.failures = 0

    def failed(self, error: BaseException | str) -> None:
        """After a failed call: ModelOutage when this failure trips the breaker."""
        self.failures += 1
        if self.reason is None:
            if refuses_key(error):
                self.reason = KEY_REFUSED
            elif self.failures >= self.limit:
                self.reason = failed_in_a_row(self.failures)
            else:
                return
            log.info("model provider %s: %s; the debate stops", self.provider or "?", self.reason)
        raise ModelOutage(self.reason)
