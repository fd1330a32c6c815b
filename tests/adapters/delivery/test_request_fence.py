"""A debate's delivery asks its lease fence before every request the SDKs send, their own retries
included (adapters/delivery/fence.py): discord.py and slack_sdk repeat a failed request after a wait,
and a process paused in that wait, woken after another process took the debate over, must not send
it. The real discord.py webhook client and the real slack_sdk client (with Rostra's retry handlers)
against the local fakes; the fence turns while the SDK waits to retry."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import discord
import pytest

from adapters.delivery import fence as request_fence
from adapters.delivery.outage import ShownElsewhere
from adapters.delivery.queue import DeliveryQueue
from adapters.slack.app import make_web_client
from adapters.slack.settings import SlackSettings
from testkit.discord_rest import FakeDiscordREST
from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import BOT_TOKEN, CHANNEL

WEBHOOK_POST = r"/webhooks/\d+/[^/]+"
DRAFT = "Opposition: people need to ▌"


class Lease:
    """Whether this process still shows the debate, as its sink's fence answers."""

    def __init__(self) -> None:
        self.ours = True

    async def fence(self) -> bool:
        return self.ours


def delivering(lease: Lease, call: Callable[[], Awaitable[Any]]) -> asyncio.Task[Any]:
    """`call` run as a debate's delivery task runs it: with the debate's fence bound."""

    async def run() -> Any:
        request_fence.bind(lease.fence)
        return await call()

    return asyncio.create_task(run())


@pytest.mark.parametrize("taken_over", [True, False])
async def test_a_webhook_post_discord_py_retries_asks_the_fence_first(taken_over: bool) -> None:
    async with FakeDiscordREST() as api:
        with api.pointed_at():
            channel = api.add_channel()
            hook = api.add_webhook(channel)
            trace = request_fence.guard(aiohttp.TraceConfig())
            async with aiohttp.ClientSession(trace_configs=[trace]) as session:
                webhook = discord.Webhook.partial(int(hook["id"]), hook["token"], session=session)
                api.fail("POST", WEBHOOK_POST, status=502)  # once: discord.py waits 1 s and sends again
                lease = Lease()
                sending = delivering(lease, lambda: webhook.send(DRAFT, username="Opposition", wait=True))
                await api.wait_until(lambda: len(api.sent("POST", WEBHOOK_POST)) == 1)
                lease.ours = not taken_over  # meanwhile another process takes the debate over, or not
                if taken_over:
                    with pytest.raises(ShownElsewhere):
                        await sending
                    await asyncio.sleep(1.5)  # past discord.py's wait: nothing more is sent
                    assert len(api.sent("POST", WEBHOOK_POST)) == 1
                    assert api.in_channel(channel) == []
                else:
                    await sending
                    assert len(api.sent("POST", WEBHOOK_POST)) == 2
                    assert [m["content"] for m in api.in_channel(channel)] == [DRAFT]


@pytest.mark.parametrize("taken_over", [True, False])
@pytest.mark.parametrize("failure", ["429 on a post", "503 on an edit"])
async def test_a_call_slack_sdk_retries_asks_the_fence_first(failure: str, taken_over: bool) -> None:
    async with FakeSlack() as api:
        client = make_web_client(BOT_TOKEN, SlackSettings(api_url=api.base_url))
        posted = await client.chat_postMessage(channel=CHANNEL, text="Opposition: people")
        if failure == "429 on a post":
            method = "chat.postMessage"
            api.fail_next(method, retry_after="2")  # the SDK waits Retry-After and sends it again
            call = lambda: client.chat_postMessage(channel=CHANNEL, text=DRAFT)  # noqa: E731
        else:
            method = "chat.update"
            api.fail_next(method, status=503, error="service_unavailable")  # an edit: the SDK repeats it
            call = lambda: client.chat_update(channel=CHANNEL, ts=posted["ts"], text=DRAFT)  # noqa: E731
        before = len(api.calls_to(method))
        lease = Lease()
        sending = delivering(lease, call)
        await api.wait_until(lambda: len(api.calls_to(method)) == before + 1)
        lease.ours = not taken_over
        if taken_over:
            with pytest.raises(ShownElsewhere):
                await sending
            assert len(api.calls_to(method)) == before + 1  # not sent again
            assert [m["text"] for m in api.top_level(CHANNEL)] == ["Opposition: people"]
        else:
            await sending
            assert len(api.calls_to(method)) == before + 2
            assert DRAFT in [m["text"] for m in api.top_level(CHANNEL)]


class NoPacing:
    def take_due(self) -> list[str]:
        return []

    def next_due(self) -> float | None:
        return None

    def take_all(self) -> list[str]:
        return []


async def test_the_delivery_queue_binds_its_fence_for_the_requests_its_items_send() -> None:
    """Each item's requests ask the queue's fence: an item whose request finds the debate shown
    elsewhere ends there, and the items after it are dropped."""
    lease = Lease()
    answers: list[bool] = []

    async def deliver(item: str) -> None:
        answers.append(await request_fence.still_ours())  # as a request's trace asks
        if item == "turn 2":
            lease.ours = False  # taken over while this item's request waits to be sent again
        await request_fence.check()

    queue: DeliveryQueue[str, str] = DeliveryQueue(
        deliver=deliver,
        send=lambda held: asyncio.sleep(0),
        pacing=NoPacing(),
        name=lambda: "test debate",
        on_demand=True,
        fence=lease.fence,
    )
    for item in ("turn 1", "turn 2", "turn 3"):
        queue.put(item)
    await queue.idle()
    assert answers == [True, True]  # turn 3 never delivered
    assert await request_fence.still_ours()  # outside the queue's task nothing is fenced
