"""`rostra slack`: clear one-line errors for missing tokens, and a real HTTP server run end to end."""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.cli import UsageError
from bot.config import Secrets
from bot.slack_main import Mode, add_slack_commands, choose_mode, serve
from core.clock import FakeClock
from tests.adapters.slack.conftest import (
    APP_TOKEN,
    BOT_TOKEN,
    SCRIPT,
    SIGNING_SECRET,
    envelope,
    mention_event,
    sign,
)
from tests.adapters.slack.fake_slack import FakeSlack
from tests.helpers import CONFIG_PATH, make_config, write_script


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rostra")
    parser.add_argument("--config")
    add_slack_commands(parser.add_subparsers(dest="command"))
    return parser.parse_args(["--config", str(CONFIG_PATH), *argv])


def test_missing_bot_token_is_a_usage_error() -> None:
    args = parse("slack")
    with pytest.raises(UsageError, match="SLACK_BOT_TOKEN is not set"):
        args.handler(args)


def test_http_mode_needs_the_signing_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    args = parse("slack", "--port", "4000")
    with pytest.raises(UsageError, match="SLACK_SIGNING_SECRET is not set"):
        args.handler(args)


def test_the_mode_follows_the_tokens() -> None:
    settings = make_config(Path("/tmp")).slack
    socket_mode = choose_mode(
        Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN),
        settings,
        force_http=False,
        host=None,
        port=None,
    )
    assert socket_mode == Mode(socket=True, app_token=APP_TOKEN)
    both = Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN, slack_signing_secret=SIGNING_SECRET)
    assert choose_mode(both, settings, force_http=True, host=None, port=4100) == Mode(
        socket=False, host="0.0.0.0", port=4100
    )
    with pytest.raises(UsageError, match="starts with xapp-"):
        choose_mode(
            Secrets(slack_bot_token=BOT_TOKEN, slack_app_token="xoxb-wrong"),
            settings,
            force_http=False,
            host=None,
            port=None,
        )


def test_a_bad_port_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("slack", "--port", "99999")
    assert "--port must be between 1 and 65535" in capsys.readouterr().err


@pytest.fixture
async def api() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_http_mode_serves_signed_requests(tmp_path: Path, api: FakeSlack) -> None:
    config = make_config(
        tmp_path,
        model={"script": str(write_script(tmp_path, SCRIPT)), "latency": 0},
        slack={"api_url": api.base_url, "edit_interval": 0},
        limits={"user_cooldown": 0, "max_rounds": 1},
        formats={"arena": {"exchanges_per_round": 1}},
    )
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET)
    port = free_port()
    stop = asyncio.Event()
    serving = asyncio.create_task(
        serve(config, secrets, Mode(socket=False, host="127.0.0.1", port=port), stop=stop, clock=FakeClock())
    )
    try:
        body = json.dumps(envelope(mention_event("debate Should cities ban cars?")))
        url = f"http://127.0.0.1:{port}/slack/events"
        async with aiohttp.ClientSession() as http:
            for _ in range(100):
                try:
                    async with http.post(
                        url, data=body, headers={**sign(body), "Content-Type": "application/json"}
                    ) as r:
                        assert r.status == 200
                        break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.02)
            else:
                pytest.fail("the server never came up")
            async with http.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
                assert r.status == 401
        await api.wait_until(lambda: any(m["text"].startswith("The end") for m in api.messages.values()))
    finally:
        stop.set()
        assert await serving == 0
    assert api.calls[0].method == "auth.test"


async def test_a_token_slack_rejects_ends_with_one_line(
    tmp_path: Path, api: FakeSlack, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(tmp_path, slack={"api_url": api.base_url})
    api.fail_next("auth.test", status=200, error="invalid_auth")
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN)
    code = await serve(config, secrets, Mode(socket=True, app_token=APP_TOKEN), stop=asyncio.Event())
    assert code == 1
    assert (
        capsys.readouterr().err.strip()
        == "rostra: Slack refused SLACK_BOT_TOKEN (invalid_auth); check the token."
    )
