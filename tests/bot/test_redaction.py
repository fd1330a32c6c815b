"""Secrets never reach the logs, at any level: held values and every known token shape."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

import aiosqlite
import pytest
from aiohttp import web
from slack_sdk.web.async_client import AsyncWebClient

from bot.logging import setup_logging
from core.redaction import hold_secret, redact

BOT_TOKEN = "xoxb-1111111111-2222222222-AbCdEfGhIjKlMnOpQrStUvWx"
OAUTH_CODE = "1234567890.1234567890.0123456789abcdef0123456789abcdef"


@pytest.fixture
def debug_log() -> Iterator[io.StringIO]:
    """What `rostra` writes to stderr at `logging.level: DEBUG` with the chatty libraries verbose."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    setup_logging("DEBUG", verbose=["slack_sdk", "aiosqlite"])
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
        setup_logging(logging.getLevelName(level))


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"token {BOT_TOKEN} in a sentence", BOT_TOKEN),
        ("app xapp-1-A0123-456789-abcdefABCDEF0123", "A0123-456789-abcdefABCDEF0123"),
        ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "api03-abcdefghijklmnopqrstuvwxyz"),
        ("MTIzNDU2Nzg5MDEyMzQ1Njc4.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789AB", "GAbCdE.abcdefghij"),
        (f"GET /slack/oauth_redirect?code={OAUTH_CODE}&state=s1", OAUTH_CODE),
        (f"form code={OAUTH_CODE}&client_id=1", OAUTH_CODE),
        ("body {'ok': True, 'access_token': 'opaque-value-without-shape'}", "opaque-value-without-shape"),
        ("POST /webhooks/1234567890/aW50ZXJhY3Rpb246MTIzNDU2Nzg5", "aW50ZXJhY3Rpb246MTIzNDU2Nzg5"),
    ],
)
def test_known_token_shapes_are_masked(text: str, secret: str) -> None:
    assert secret not in redact(text)
    assert "***" in redact(text)


def test_ordinary_text_and_status_codes_stay_readable() -> None:
    text = "the debate d-12 ended: {'code': 200, 'ok': true} after 4 turns"
    assert redact(text) == text


async def test_a_workspace_token_in_slack_sdk_and_sql_debug_logs_is_masked(
    debug_log: io.StringIO, tmp_path: Path
) -> None:
    held = "opaque-installation-secret-42"  # no known shape: masked because the process holds it
    hold_secret(held)

    async def access(request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "access_token": BOT_TOKEN, "bot_user_id": "U1"})

    app = web.Application()
    app.router.add_post("/api/oauth.v2.access", access)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        client = AsyncWebClient(base_url=f"http://127.0.0.1:{port}/api/")
        answer = await client.oauth_v2_access(client_id="1", client_secret="shh-secret", code=OAUTH_CODE)
        assert answer["access_token"] == BOT_TOKEN
        async with aiosqlite.connect(tmp_path / "r.db") as db:
            await db.execute("CREATE TABLE installs (team TEXT, token TEXT, other TEXT)")
            await db.execute("INSERT INTO installs VALUES (?, ?, ?)", ("T1", BOT_TOKEN, held))
            await db.commit()
    finally:
        await runner.cleanup()
    err = debug_log.getvalue()
    assert "oauth.v2.access" in err  # the debug logs were written...
    assert "INSERT INTO installs" in err
    for secret in (BOT_TOKEN, held, OAUTH_CODE, "shh-secret"):
        assert secret not in err  # ...without a secret in them
