"""The loopback REST fake holds discord.py to Discord's published limits, through the real client."""

from __future__ import annotations

import asyncio
import time

import discord
import pytest

from testkit.discord_rest import Limits
from testkit.discord_world import loopback


async def test_webhook_limit_is_enforced_and_discord_py_waits_it_out() -> None:
    async with loopback(Limits(webhook=(5, 0.4))) as lb:
        thread = lb.thread()
        hook = await lb.channel.create_webhook(name="Rostra")
        started = time.monotonic()
        # One task per post: discord.py serialises them per webhook and sleeps when the bucket is empty.
        await asyncio.gather(
            *(hook.send(content=f"m{i}", username="Pro", thread=thread, wait=True) for i in range(12))
        )
        elapsed = time.monotonic() - started
        assert sorted(m["content"] for m in lb.api.in_channel(thread.id)) == sorted(
            f"m{i}" for i in range(12)
        )
        assert elapsed >= 0.8  # 12 posts at 5 per 0.4 s need at least two refills
        executes = lb.api.sent("POST", r"/webhooks/\d+/[^/]+")
        assert len(executes) - len(lb.api.rate_limited) == 12


@pytest.mark.parametrize("bucket", ["channel", "global"])
async def test_a_429_carries_retry_after_and_discord_py_waits_before_retrying(bucket: str) -> None:
    async with loopback(Limits(channel=(2, 0.5), global_=(50, 0.5))) as lb:
        thread = lb.thread()
        lb.api.exhaust(f"channel:{thread.id}" if bucket == "channel" else "global")  # another process
        await thread.send("hello")
        first, second = lb.api.sent("POST", rf"/channels/{thread.id}/messages")
        assert (first.status, second.status) == (429, 200)
        assert second.at - first.at >= 0.45  # the body's retry_after, honoured
        assert [m["content"] for m in lb.api.in_channel(thread.id)] == ["hello"]


async def test_a_cloudflare_429_is_not_retried_by_discord_py() -> None:
    async with loopback() as lb:
        thread = lb.thread()
        lb.api.fail("POST", rf"/channels/{thread.id}/messages", status=429, cloudflare=True)
        with pytest.raises(discord.HTTPException) as caught:
            await thread.send("hello")
        assert caught.value.status == 429
        assert len(lb.api.sent("POST", rf"/channels/{thread.id}/messages")) == 1


async def test_a_post_stored_but_answered_502_is_retried_by_discord_py_and_nonce_dedups() -> None:
    async with loopback() as lb:
        thread = lb.thread()
        lb.api.fail("POST", rf"/channels/{thread.id}/messages", status=502, after_store=True)
        message = await thread.send("hello", nonce="turn-1")
        assert len(lb.api.sent("POST", rf"/channels/{thread.id}/messages")) == 2  # discord.py retried
        assert [m["content"] for m in lb.api.in_channel(thread.id)] == ["hello"]  # the nonce held
        assert message.id == int(lb.api.in_channel(thread.id)[0]["id"])


async def test_a_deleted_thread_answers_unknown_channel() -> None:
    async with loopback() as lb:
        thread = lb.thread()
        lb.api.delete_channel(thread.id)
        with pytest.raises(discord.NotFound) as caught:
            await thread.send("hello")
        assert caught.value.code == 10003
