"""The closing card carries the results picture (the real discord.py client against the loopback
REST fake, which takes attachments as Discord does): attached once, shown in the card, described in
words; a drawing failure or `results.picture: false` leaves the card as it was, without it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from adapters.pictures.data import picture_of
from testkit.discord_world import Arena, arena

THREAD_POSTS = r"/channels/\d+/messages"


def closing_message(world: Arena, thread_id: int) -> dict[str, Any]:
    [closing] = [
        m
        for m in world.lb.api.in_channel(thread_id)
        if m["embeds"] and str(m["embeds"][0].get("title", "")).startswith("🏁 Debate over")
    ]
    return closing


async def test_the_closing_card_shows_the_results_picture_as_its_attachment(tmp_path: Path) -> None:
    async with arena(tmp_path) as world:
        ran = await world.run()
        debate_id = ran.handle.debate_id
        closing = closing_message(world, ran.thread.id)

        [attachment] = closing["attachments"]
        assert attachment["filename"] == f"rostra-{debate_id}-results.png"
        assert world.lb.api.files[int(attachment["id"])].startswith(b"\x89PNG\r\n\x1a\n")
        picture = picture_of(await world.rt.store.events(debate_id))
        assert picture is not None and picture.alt
        assert attachment["description"] == picture.alt[:1024]  # the result in words, for screen readers
        [card] = closing["embeds"]
        assert card["image"]["url"] == attachment["url"]  # the card shows the attached picture
        # within Discord's limits: one post, nothing refused or rate limited
        posts = [r for r in world.lb.api.sent("POST", THREAD_POSTS) if r.body.get("attachments")]
        assert [r.status for r in posts] == [200]
        assert world.lb.api.rate_limited == []


async def test_a_picture_that_cannot_be_drawn_leaves_the_closing_card_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(picture: object) -> bytes:
        raise RuntimeError("the drawing library broke")

    monkeypatch.setattr("adapters.pictures.draw.to_png", broken)
    caplog.set_level(logging.WARNING, logger="adapters.pictures.render")
    async with arena(tmp_path) as world:
        ran = await world.run()
        closing = closing_message(world, ran.thread.id)

        assert closing["attachments"] == [] and "image" not in closing["embeds"][0]
        assert closing["embeds"][0]["fields"][0]["name"] == "Who spoke"  # the card itself is whole
        failures = [r for r in caplog.records if "could not be drawn" in r.getMessage()]
        assert len(failures) == 1 and failures[0].exc_info is not None
        assert ran.handle.debate_id in failures[0].getMessage()


async def test_pictures_off_posts_no_picture(tmp_path: Path) -> None:
    async with arena(tmp_path, results={"picture": False}) as world:
        ran = await world.run()
        closing = closing_message(world, ran.thread.id)

        assert closing["attachments"] == [] and "image" not in closing["embeds"][0]
        assert not any(r.body.get("attachments") for r in world.lb.api.requests)
