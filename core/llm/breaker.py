"""A debate's circuit breaker on its model provider: a dead model is given up on, an unavailable one
is waited out, neither is worked around.

A call that fails because the provider is unavailable (overloaded, a 5xx, rate-limited, no answer)
is never worked around: the provider is down, and the same call is tried again after a backoff, as
the probe, until one gets through (a turn is spoken, a vote cast, not a stand-in line or a vote
counted as keep: an outage of 30 s used to cost the turns and votes of its first seconds). The
first such failure is retried quietly (a blip); from the second in a row the debate waits (its
clock stopped, the thread told once), and the call that gets through brings it back (the thread
told how long it paused). Past `model.outage_limit` the debate stops, resumable (`ModelOutage`,
`resumable`).
Any other failure falls back when isolated (a stand-in line, a vote counted as keep) and the debate
goes on; after `model.failure_limit` failures in a row from one provider, or at once when the
provider refuses the API key, every further call would fail the same way, so the debate ends
`failed` with the reason instead of filling its thread with fallbacks.
Recalled calls of a resumed debate count as they did live, so a replay trips at the same place
(without waiting again: the calls that were retried while it was down are recorded once).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from core.errors import ModelOutage

log = logging.getLogger(__name__)

KEY_REFUSED = "the model refused the API key"
FIRST_PROBE = 2.0  # seconds before the first call is tried again (doubles, up to LONGEST_PROBE)
LONGEST_PROBE = 30.0
TELL_AFTER = 2
"""Unavailable failures in a row before the debate pauses and says so (the first is a blip, retried
quietly after FIRST_PROBE)."""

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

_UNAVAILABLE_STATUS = {408: "no answer", 429: "rate-limited", 529: "overloaded"}  # 5xx: a server error
_UNAVAILABLE_TYPES = frozenset(
    {"APIConnectionError", "APITimeoutError", "RateLimitError", "InternalServerError", "OverloadedError"}
)
_UNAVAILABLE_SIGNS = {
    "overloaded": "overloaded",
    "(529)": "overloaded",
    "rate_limit": "rate-limited",
    "rate limit": "rate-limited",
    "(429)": "rate-limited",
    "error code: 429": "rate-limited",
    "error code: 5": "a server error",
    "api_error": "a server error",
    "service unavailable": "a server error",
    "bad gateway": "a server error",
    "connection error": "no answer",
    "timed out": "no answer",
    "no reply within": "no answer",
}
"""How an unavailable provider reads in an error's text, and how the thread is told."""


def _chain(error: BaseException | str) -> list[BaseException | str]:
    seen: list[BaseException | str] = []
    current: BaseException | str | None = error
    while current is not None and len(seen) < 8:
        seen.append(current)
        current = (current.__cause__ or current.__context__) if isinstance(current, BaseException) else None
    return seen


def refuses_key(error: BaseException | str) -> bool:
    """Whether a model call failed because the provider refused the API key (HTTP 401)."""
    seen = _chain(error)
    for item in seen:
        if isinstance(item, BaseException) and (
            getattr(item, "status_code", None) == 401 or type(item).__name__ == "AuthenticationError"
        ):
            return True
    return any(sign in str(item).lower() for item in seen for sign in _KEY_SIGNS)


def unavailable(error: BaseException | str) -> str | None:
    """What is wrong, in a few words, when a call failed because the provider is unavailable for a
    while (overloaded, a 5xx, rate-limited, no answer) rather than refusing the call; else None."""
    if refuses_key(error):
        return None
    seen = _chain(error)
    for item in seen:
        if isinstance(item, BaseException):
            status = getattr(item, "status_code", None)
            if isinstance(status, int) and (status in _UNAVAILABLE_STATUS or 500 <= status < 600):
                return _UNAVAILABLE_STATUS.get(status, "a server error")
            if type(item).__name__ in _UNAVAILABLE_TYPES or isinstance(item, TimeoutError | ConnectionError):
                return "no answer"
    text = " ".join(str(item).lower() for item in seen)
    return next((said for sign, said in _UNAVAILABLE_SIGNS.items() if sign in text), None)


def failed_in_a_row(count: int) -> str:
    return f"the model failed {count} times in a row"


def unavailable_for(seconds: float) -> str:
    return f"the model was unavailable for {seconds:.0f} s"


class OutageWatch(Protocol):
    """The debate's side of a provider outage: its time, and what the thread is told."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    async def down(self, provider: str, what: str) -> None:
        """The provider is down (`what`: overloaded, …): the debate's clock stops; say so once."""
        ...

    async def back(self, provider: str, waited: float) -> None:
        """It answers again after `waited` seconds: the clock goes on; say how long it paused."""
        ...

    async def answering(self, provider: str) -> None:
        """A live call got through while the provider was up here (an outage the debate was in before a
        takeover may be over)."""
        ...

    async def calling(self) -> None:
        """Before each live call: raises (core.errors.LeaseLost) once the debate is no longer this
        process's, so a process woken from a pause pays for no call another is making."""
        ...


class _Unwatched:
    """Waiting out an outage with nobody told (a breaker outside a session)."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def down(self, provider: str, what: str) -> None:
        return None

    async def back(self, provider: str, waited: float) -> None:
        return None

    async def answering(self, provider: str) -> None:
        return None

    async def calling(self) -> None:
        return None


class ModelBreaker:
    """Consecutive failures of one provider's calls in one debate: up, down (waited out), or tripped
    for good."""

    def __init__(self, provider: str, limit: int, outage_limit: float = 600.0) -> None:
        self.provider = provider
        self.limit = limit
        self.outage_limit = outage_limit
        self.failures = 0
        self.reason: str | None = None  # set once tripped: why the debate cannot go on
        self.resumable = False  # tripped by an outage past its limit: the debate may go on later
        self.down_since: float | None = None  # down: when (the watch's time)
        self._paused_since: float | None = None  # the debate waits, its clock stopped (from the
        # TELL_AFTER-th failure in a row; the first is retried quietly)
        self._told = False  # the debate was told it is down (not so when a replay found it down)
        self._unavailable = 0  # unavailable failures in a row
        self._delay = FIRST_PROBE
        self.watch: OutageWatch = _Unwatched()

    def _trip(self, reason: str, *, resumable: bool = False) -> ModelOutage:
        self.reason, self.resumable = reason, resumable
        log.info("model provider %s: %s; the debate stops", self.provider or "?", reason)
        return ModelOutage(reason, resumable=resumable)

    async def admit(self) -> None:
        """Before a call: ModelOutage once tripped (no call is made); while the provider is down,
        wait before this call, which is the next probe; LeaseLost once the debate is another's."""
        if self.reason is not None:
            raise ModelOutage(self.reason, resumable=self.resumable)
        if self.down_since is not None:
            waited = self.watch.now() - self.down_since
            if waited >= self.outage_limit:
                raise self._trip(unavailable_for(waited), resumable=True)
            delay = min(self._delay, self.outage_limit - waited)
            self._delay = min(self._delay * 2, LONGEST_PROBE)
            await self.watch.sleep(delay)
        await self.watch.calling()  # after the wait: a pause most likely falls in it

    async def succeeded(self, *, live: bool = True) -> None:
        self.failures = self._unavailable = 0
        if self._paused_since is None and live:
            await self.watch.answering(self.provider)
        if self.down_since is not None:
            now = self.watch.now()
            waited = now - self.down_since
            paused = None if self._paused_since is None else now - self._paused_since
            self.down_since, self._paused_since, self._delay = None, None, FIRST_PROBE
            if live and paused is not None and self._told:
                log.warning("model provider %s answers again after %.0f s", self.provider or "?", waited)
                await self.watch.back(self.provider, paused)

    async def failed(self, error: BaseException | str, *, live: bool = True) -> bool:
        """After a failed call: True when the provider is down and the call is to be tried again (after
        `admit`); ModelOutage when this failure trips the breaker; else False (the caller falls back).
        A recalled failure (`live=False`) goes down quietly: the thread was told when it happened."""
        self.failures += 1
        if self.reason is not None:
            raise ModelOutage(self.reason, resumable=self.resumable)
        if refuses_key(error):
            raise self._trip(KEY_REFUSED)
        what = unavailable(error)
        if what is not None:
            self._unavailable += 1
            if self.down_since is None:
                self.down_since = self.watch.now()
            if self._paused_since is None and (self._unavailable >= TELL_AFTER or not live):
                self._paused_since, self._told = self.watch.now(), live
                log.warning("model provider %s is unavailable (%s); the debate waits", self.provider, what)
                if live:
                    await self.watch.down(self.provider, what)
            return True
        self._unavailable = 0
        if self.failures >= self.limit:
            raise self._trip(failed_in_a_row(self.failures))
        return False
