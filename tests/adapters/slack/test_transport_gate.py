"""The HTTP server before Bolt: an unsigned request, whatever its body and headers, gets 401 and
leaves no traceback (Bolt used to parse the body first: bad JSON, deep nesting or a huge number gave
500 and an ERROR traceback); a signed body it cannot read gets 400; the install page is limited per
client, and the OAuth states it stores stay bounded. A property test posts random bodies, headers
and timestamps to the real server: never a 500, never a traceback."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.slack.inbound.gate import InstallLimit
from adapters.slack.install.installations import StoredOAuthStates
from core.ports import Installations
from core.storage import open_store
from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import Harness, envelope, mention_event, sign
from tests.adapters.slack.test_oauth import oauth_harness

FORM = "application/x-www-form-urlencoded"
MALFORMED = {
    "bad JSON": ('{"type": "event_callback", "event": ', "application/json"),
    "deep nesting": ("[" * 50_000 + "]" * 50_000, "application/json"),
    "a 5,000-digit number": (
        '{"type": "event_callback", "event_time": ' + "9" * 5000 + "}",
        "application/json",
    ),
    "a form payload of bad JSON": ("payload=%7B%22type%22%3A", FORM),
    "a form payload nested deep": ("payload=" + "%5B" * 50_000, FORM),
    "bytes that are not UTF-8": ("\udcff\udcfe", "application/json"),
}


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("timestamp", ["now", "not-a-number", "9" * 40, ""])
async def test_an_unsigned_malformed_request_gets_401_and_no_traceback(
    slack: Harness, caplog: pytest.LogCaptureFixture, case: str, timestamp: str
) -> None:
    body, content_type = MALFORMED[case]
    raw = body.encode("utf-8", "surrogateescape")
    stamp = str(int(time.time())) if timestamp == "now" else timestamp
    headers = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": "v0=" + "0" * 64}
    with caplog.at_level(logging.DEBUG):
        response = await slack.http.post(
            "/slack/events", data=raw, headers={"Content-Type": content_type, **headers}
        )
    assert response.status == 401
    no_traceback(caplog)
    assert slack.api.calls == []


async def test_a_signed_body_bolt_cannot_read_gets_400_and_no_traceback(
    slack: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    body = "[" * 50_000 + "]" * 50_000
    with caplog.at_level(logging.DEBUG):
        response = await slack.post(body, "application/json")
    assert response.status == 400
    no_traceback(caplog)


async def test_a_signed_request_still_goes_through(slack: Harness) -> None:
    await slack.mention("debate Should cities ban cars?")
    handle = await slack.wait_running()
    assert handle.spec.topic == "Should cities ban cars?"


async def test_the_install_page_is_limited_per_client_and_its_states_stay_bounded(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with oauth_harness(tmp_path, api) as slack:
        statuses = [(await slack.http.get("/slack/install")).status for _ in range(15)]
        assert statuses[:10] == [200] * 10
        assert set(statuses[10:]) == {429}
    store = await open_store(f"sqlite:///{tmp_path / 'rostra.db'}")
    try:
        assert isinstance(store, Installations)
        states = StoredOAuthStates(store, max_states=5)
        for _ in range(12):
            await states.async_issue()
        assert await states.live() == 5
    finally:
        await store.close()


def test_the_install_limit_forgets_visits_after_a_minute() -> None:
    now = [0.0]
    limit = InstallLimit(per_minute=2, clock=lambda: now[0])
    assert [limit.allow("1.2.3.4") for _ in range(3)] == [True, True, False]
    assert limit.allow("5.6.7.8")  # another client has its own allowance
    now[0] = 60.0
    assert limit.allow("1.2.3.4")


JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
BODIES = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=2000).map(str.encode),
    JSONISH.map(lambda v: json.dumps(v).encode()),
    JSONISH.map(lambda v: b"payload=" + json.dumps(v).encode()),
    st.just(json.dumps(envelope(mention_event("debate x"))).encode()),
)
HEADER_TEXT = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)
TIMESTAMPS = st.one_of(
    st.none(),
    HEADER_TEXT,
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.just("now"),
)
CONTENT_TYPES = st.sampled_from(["application/json", FORM, "text/plain", "", "multipart/form-data"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=BODIES,
    timestamp=TIMESTAMPS,
    signature=st.one_of(st.none(), HEADER_TEXT, st.just("signed")),
    content_type=CONTENT_TYPES,
    extra=st.dictionaries(st.sampled_from(["X-Slack-Retry-Num", "X-Forwarded-For", "Accept"]), HEADER_TEXT),
)
async def test_random_requests_never_get_a_500_or_a_traceback(
    slack: Harness,
    caplog: pytest.LogCaptureFixture,
    body: bytes,
    timestamp: str | None,
    signature: str | None,
    content_type: str,
    extra: dict[str, str],
) -> None:
    headers = dict(extra)
    if content_type:
        headers["Content-Type"] = content_type
    if timestamp is not None:
        headers["X-Slack-Request-Timestamp"] = str(int(time.time())) if timestamp == "now" else timestamp
    if signature == "signed" and body.decode("utf-8", "replace") == body.decode("utf-8", "ignore"):
        stamp = headers.setdefault("X-Slack-Request-Timestamp", str(int(time.time())))
        if stamp.isascii() and stamp.isdigit():
            headers["X-Slack-Signature"] = sign(body.decode(), ts=int(stamp))["X-Slack-Signature"]
    elif signature is not None:
        headers["X-Slack-Signature"] = signature
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        response = await slack.http.post("/slack/events", data=body, headers=headers)
        await response.read()
    assert response.status < 500, (response.status, body[:200], headers)
    no_traceback(caplog)
