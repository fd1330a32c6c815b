"""Discord's global limit (50 requests a second per bot) is kept where discord.py sends each
request, retries and every kind of call included, not where a delivery decides to make one: calls
decided apart can reach Discord together after waiting in discord.py's own queues."""

from __future__ import annotations

import asyncio

import pytest

from adapters.discord.delivery import webhooks
from adapters.discord.delivery.webhooks import PersonaWebhooks
from testkit.discord_rest import Limits
from testkit.discord_world import loopback

BOT_LIMIT = (10, 1.0)
"""Discord's global limit, made small so that a burst meets it."""


async def _burst(paced: bool) -> int:
    """30 bot messages at once, in 30 threads (no per-channel limit in the way): the 429s answered."""
    hooks = PersonaWebhooks("Rostra")
    async with loopback(Limits(global_=BOT_LIMIT), webhooks=hooks if paced else None) as lb:
        threads = [lb.thread() for _ in range(30)]
        sent = await asyncio.gather(
            *(t.send(f"message {i}") for i, t in enumerate(threads)), return_exceptions=True
        )
        if paced:
            assert all(len(lb.api.in_channel(t.id)) == 1 for t in threads), sent
        return len(lb.api.rate_limited)


@pytest.mark.slow
async def test_requests_paced_as_they_are_sent_meet_no_global_429(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webhooks, "GLOBAL_LIMIT", (BOT_LIMIT[0] - 1, BOT_LIMIT[1]))  # the bot's margin
    assert await _burst(paced=True) == 0
    assert await _burst(paced=False) > 0  # the same burst unpaced: 429s, some past discord.py's tries


def test_an_interactions_answers_are_not_held_behind_the_debates_requests() -> None:
    window = PersonaWebhooks("Rostra").pacing(lambda: 42)
    assert window("/api/v10/interactions/7/tok/callback") is None
    assert window("/api/v10/webhooks/42/tok/messages/@original") is None  # the app's follow-ups
    assert window("/api/v10/webhooks/7/tok") is not None  # a persona webhook counts
    assert window("/api/v10/channels/7/messages") is not None
