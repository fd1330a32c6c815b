"""Serving: Socket Mode envelopes over a local WebSocket drive the same app; startup checks the token."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from adapters.slack import create_app
from adapters.slack.serve import check_token, run_socket_mode
from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import (
    APP_TOKEN,
    BOT_TOKEN,
    CHANNEL,
    SCRIPT,
    Harness,
    envelope,
    mention_event,
    slash_fields,
)
from tests.helpers import make_config, write_script


async def test_an_event_over_the_socket_is_acked_and_starts_a_debate(tmp_path: Path, api: FakeSlack) -> None:
    config = make_config(
        tmp_path,
        model={"script": str(write_script(tmp_path, SCRIPT)), "latency": 0},
        slack={"api_url": api.base_url, "edit_interval": 0, "post_results": False},
        limits={"user_cooldown": 0, "max_rounds": 1},
        formats={"arena": {"exchanges_per_round": 1}},
    )
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN)  # no signing secret needed
    async with Runtime(config, clock=FakeClock(), secrets=secrets) as rt:
        app = create_app(rt)
        stop = asyncio.Event()
        serving = asyncio.create_task(run_socket_mode(app, APP_TOKEN, stop))
        try:
            payload = envelope(mention_event("debate Should cities ban cars?"))
            ack = await api.push_envelope("events_api", payload)
            assert set(ack) == {"envelope_id"}

            help_ack = await api.push_envelope(
                "slash_commands", slash_fields("help", user="UBOB", channel=CHANNEL, response_url=api.root)
            )
            assert "Rostra runs debates between AI personas" in help_ack["payload"]["text"]
            assert help_ack["payload"]["response_type"] == "ephemeral"

            await api.wait_until(lambda: rt.manager.find(platform="slack", channel=CHANNEL) is not None)
            await asyncio.wait_for(app.front.wait_idle(), 20)
            (opening,) = api.top_level(CHANNEL)
            thread = api.thread(CHANNEL, opening["ts"])
            assert thread[-1]["text"].startswith("The end")
            assert [c.token for c in api.calls_to("apps.connections.open")] == [APP_TOKEN]
        finally:
            stop.set()
            await serving
            await app.aclose()


async def test_missing_scopes_are_named_at_startup(
    slack: Harness, api: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    api.scopes = (
        "app_mentions:read,chat:write,commands,reactions:read,reactions:write,channels:read,groups:read"
    )
    with caplog.at_level(logging.WARNING, logger="adapters.slack.serve"):
        assert await check_token(slack.app) == "Rostra Test"
    missing = (
        "channels:history, chat:write.customize, files:read, files:write, groups:history, im:history,"
        " usergroups:read"
    )
    assert f"lacks scopes {missing}" in caplog.text
