"""The HTTP server's gate: what an unauthenticated client can make it do, before Bolt sees a request.

Bolt parses a request's body (JSON, or a form with a JSON `payload`) before its middleware checks
Slack's signature, so a forged body (bad JSON, deep nesting, a huge number) or a timestamp that is
no number ended in an HTTP 500 and an ERROR traceback. Here the signature is checked on the raw
bytes first: an unsigned or badly signed request gets 401 and nothing is parsed; a signed body Bolt
still cannot read gets 400. The install page (`GET /slack/install`, which stores an OAuth state per
visit) is limited per client address, so no one fills the database from a script. The install pages
(the link and Slack's redirect back) answer 503 in words when the database does not answer: the
admin installing tries again, rather than reading a bare 500.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from core.errors import StoreError

log = logging.getLogger(__name__)

SKEW_SECONDS = 300  # Slack's rule: a request older (or newer) than five minutes is a replay
INSTALLS_PER_MINUTE = 10  # install page visits per client address and minute
_CLIENTS = 10_000  # client addresses remembered for the install limit (the oldest are forgotten)
_TIMESTAMP_DIGITS = 12
INSTALL_AWAY = (
    "Rostra's database isn't answering right now, so the install could not be completed;"
    " open the install link again in a moment."
)

# what Bolt raises building a request from a body of the wrong shape (listeners' errors stay inside Bolt)
_UNREADABLE = (ValueError, RecursionError, TypeError, AttributeError, KeyError, IndexError)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def signed(secret: str, body: bytes, timestamp: str | None, signature: str | None, now: float) -> bool:
    """Whether Slack signed `body` (v0 HMAC-SHA256 of `v0:timestamp:body`) within the last 5 minutes.
    Never raises, whatever the headers hold."""
    if not timestamp or not signature or len(timestamp) > _TIMESTAMP_DIGITS:
        return False
    if not (timestamp.isascii() and timestamp.isdigit()):
        return False
    if abs(now - int(timestamp)) > SKEW_SECONDS:
        return False
    digest = hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256)
    return hmac.compare_digest("v0=" + digest.hexdigest(), signature)


class InstallLimit:
    """At most `per_minute` install-page visits per client address in any minute."""

    def __init__(self, per_minute: int = INSTALLS_PER_MINUTE, clock: Callable[[], float] = time.monotonic):
        self.per_minute = per_minute
        self._clock = clock
        self._visits: OrderedDict[str, deque[float]] = OrderedDict()

    def allow(self, client: str) -> bool:
        now = self._clock()
        visits = self._visits.pop(client, None) or deque()
        while visits and now - visits[0] >= 60:
            visits.popleft()
        allowed = len(visits) < self.per_minute
        if allowed:
            visits.append(now)
        self._visits[client] = visits
        while len(self._visits) > _CLIENTS:
            self._visits.popitem(last=False)
        return allowed


def gate(
    signing_secret: str | None,
    *,
    events_path: str,
    install_path: str | None,
    redirect_path: str | None = None,
    limit: InstallLimit | None = None,
    clock: Callable[[], float] = time.time,
) -> Middleware:
    """The aiohttp middleware: signature first on `events_path`, a visit limit on `install_path`,
    and the install pages' answer while the database is away."""
    installs = limit or InstallLimit()

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method == "POST" and request.path == events_path and signing_secret:
            body = await request.read()
            headers = request.headers
            if not signed(
                signing_secret,
                body,
                headers.get("X-Slack-Request-Timestamp"),
                headers.get("X-Slack-Signature"),
                clock(),
            ):
                log.debug("refused an unsigned request to %s", events_path)
                return web.Response(status=401, text="invalid request")
            try:
                return await handler(request)
            except _UNREADABLE as exc:  # Bolt reads the body before any listener runs
                log.warning("a signed request Bolt could not read: %s", type(exc).__name__)
                return web.Response(status=400, text="unreadable request")
        if (
            request.method == "GET"
            and install_path
            and request.path == install_path
            and not installs.allow(request.remote or "")
        ):
            return web.Response(status=429, text="too many install requests; try again in a minute")
        if request.method == "GET" and request.path in (install_path, redirect_path):
            try:
                return await handler(request)
            except StoreError as exc:
                log.warning("an install page not served: the database did not answer (%s)", exc)
                return web.Response(status=503, text=INSTALL_AWAY, headers={"Retry-After": "30"})
        return await handler(request)

    return middleware
