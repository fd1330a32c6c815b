"""A 429 from Slack pauses the workspace's whole rate window for that method, not just the one call."""

from __future__ import annotations

import random

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.app import make_web_client
from adapters.slack.delivery.rates import rates_of
from adapters.slack.settings import SlackSettings
from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import BOT_TOKEN, CHANNEL


async def test_a_429_pauses_the_whole_workspace_budget(
    api: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(random, "random", lambda: 0.0)
    client: AsyncWebClient = make_web_client(BOT_TOKEN, SlackSettings(api_url=api.base_url))
    posted = await client.chat_postMessage(channel=CHANNEL, text="x")
    api.fail_next("chat.update", retry_after="1")
    await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="y")  # the SDK waits it out
    updates = rates_of(client)["chat.update"]
    assert updates.paused_until > 0  # every debate of the workspace held back, not just this call
    assert rates_of(client)["reactions.add"].paused_until == 0  # another method: its own budget
    assert [c.method for c in api.calls][-2:] == ["chat.update", "chat.update"]
    await api.stop()
