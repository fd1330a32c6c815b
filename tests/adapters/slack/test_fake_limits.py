"""The Slack fake is as strict as Slack's published rules: Tier 3 per workspace and method, posts per
channel, persona names lost on edit, and posts that land while their answer is lost."""

from __future__ import annotations

import asyncio
import random

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from testkit.slack_api import DROP_AFTER, FakeSlack, Limits
from tests.adapters.slack.conftest import BOT_TOKEN, CHANNEL


def _client(api: FakeSlack, retries: int = 0) -> AsyncWebClient:
    handlers: list[AsyncRetryHandler] = (
        [AsyncRateLimitErrorRetryHandler(max_retry_count=retries)] if retries else []
    )
    return AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, retry_handlers=handlers)


@pytest.mark.parametrize("method", ["chat.update", "reactions.add"])
async def test_tier3_is_per_workspace_and_method(api: FakeSlack, method: str) -> None:
    api.enforce_limits(Limits(tier3=(3, 60.0), post_per_channel=(100, 1.0)))
    client = _client(api)
    posted = [await client.chat_postMessage(channel=c, text="x") for c in (CHANNEL, "C2", "C3", "C4")]
    for i, response in enumerate(posted[:3]):  # three channels, one workspace budget
        if method == "chat.update":
            await client.chat_update(channel=response["channel"], ts=response["ts"], text=f"v{i}")
        else:
            await client.reactions_add(channel=response["channel"], timestamp=response["ts"], name="x")
    other = "reactions.add" if method == "chat.update" else "chat.update"
    last = posted[3]
    late = (
        client.chat_update(channel=last["channel"], ts=last["ts"], text="late")
        if method == "chat.update"
        else client.reactions_add(channel=last["channel"], timestamp=last["ts"], name="x")
    )
    with pytest.raises(SlackApiError) as caught:
        await late
    assert caught.value.response.status_code == 429
    assert 55 <= int(caught.value.response.headers["Retry-After"]) <= 60
    # The other Tier 3 method has its own budget.
    if other == "chat.update":
        await client.chat_update(channel=last["channel"], ts=last["ts"], text="fine")
    else:
        await client.reactions_add(channel=last["channel"], timestamp=last["ts"], name="x")
    assert len(api.rate_limited) == 1


async def test_posts_are_limited_per_channel_and_the_sdk_waits_retry_after(
    api: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(random, "random", lambda: 0.0)  # slack_sdk adds up to 1 s of jitter
    api.enforce_limits()
    client = _client(api, retries=2)
    await client.chat_postMessage(channel=CHANNEL, text="one")
    await client.chat_postMessage(channel="C2", text="elsewhere")  # another channel: no wait
    await client.chat_postMessage(channel=CHANNEL, text="two")  # too soon: 429, Retry-After 1, then ok
    _, _, limited, retried = api.calls_to("chat.postMessage")
    assert limited in api.rate_limited and retried not in api.rate_limited
    assert retried.at - limited.at >= 1.0
    assert [m["text"] for m in api.top_level(CHANNEL)] == ["one", "two"]


async def test_an_edit_loses_the_persona_name_and_icon(api: FakeSlack) -> None:
    client = _client(api)
    posted = await client.chat_postMessage(channel=CHANNEL, text="hi", username="Ada", icon_emoji=":owl:")
    assert api.messages[(CHANNEL, posted["ts"])]["username"] == "Ada"
    await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="hi again", username="Ada")
    message = api.messages[(CHANNEL, posted["ts"])]
    assert message["text"] == "hi again" and "username" not in message and "icon_emoji" not in message


async def test_a_post_can_land_while_its_answer_is_lost(api: FakeSlack) -> None:
    client = _client(api)
    api.fail_next("chat.postMessage", status=DROP_AFTER)
    with pytest.raises((aiohttp.ClientError, asyncio.TimeoutError)):
        await client.chat_postMessage(channel=CHANNEL, text="landed")
    assert [m["text"] for m in api.top_level(CHANNEL)] == ["landed"]
