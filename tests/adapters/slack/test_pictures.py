"""The results picture follows the closing card into the debate's thread (real slack-bolt against the
local Web API fake, which enforces Slack's rate limits): one upload, titled and described in words;
a drawing failure or `results.picture: false` leaves the closing card alone. The transcript brings
the page to share beside the Markdown."""

from __future__ import annotations

import logging
import time
from html import escape as html_escape
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.delivery.rates import RateWindows
from adapters.pictures.data import picture_of
from adapters.slack.delivery.files import upload_file
from adapters.slack.delivery.rates import share_rates
from testkit.slack_api import FakeSlack, Limits
from testkit.slack_world import ALICE, BOT_TOKEN, CHANNEL, SCRIPT, Harness, blocks_text, open_harness

TOPIC = "Should cities ban cars?"
UPLOAD_CALLS = ("files.getUploadURLExternal", "files.completeUploadExternal")


def closing_cards(slack: Harness) -> list[dict[str, Any]]:
    return [m for m in slack.thread() if "🏁 The end" in blocks_text(m)]


async def finished(slack: Harness) -> str:
    await slack.mention(f"debate {TOPIC} humans=off")
    handle = await slack.wait_running()
    await handle.wait()
    await slack.settle()
    return handle.debate_id


@pytest.mark.slow
async def test_the_picture_follows_the_closing_card_into_the_thread(tmp_path: Path, api: FakeSlack) -> None:
    api.enforce_limits()
    async with open_harness(tmp_path, api) as slack:
        debate_id = await finished(slack)

        [closing] = closing_cards(slack)
        [picture_file] = api.files.values()
        assert picture_file["filename"] == f"rostra-{debate_id}-results.png"
        assert picture_file["data"].startswith(b"\x89PNG\r\n\x1a\n")
        assert (picture_file["channel"], picture_file["thread_ts"]) == (CHANNEL, slack.opening()["ts"])
        picture = picture_of(await slack.events(debate_id))
        assert picture is not None and picture.alt
        assert picture_file["title"] == picture.title
        assert picture_file["alt_txt"] == picture.alt[:1000]  # the result in words
        # after the closing card, one upload (its two calls), nothing over Slack's limits
        methods = [c.method for c in api.calls]
        card_post = next(
            i
            for i, c in enumerate(api.calls)
            if c.method == "chat.postMessage" and "The end" in c.args["text"]
        )
        assert [m for m in methods if m in UPLOAD_CALLS] == list(UPLOAD_CALLS)
        assert methods.index(UPLOAD_CALLS[0]) > card_post
        assert not [c for c in api.rate_limited if c.method in UPLOAD_CALLS]
        assert closing["ts"]


async def test_uploads_keep_within_the_workspace_budget(api: FakeSlack) -> None:
    """Each file takes one of each upload call from the workspace's rate windows before it goes:
    a burst is paced below the limit the fake enforces instead of answered 429."""
    api.enforce_limits(Limits(tier4=(2, 0.5)))
    client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url)
    share_rates(client, RateWindows(lambda name: (2, 0.5)))
    started = time.monotonic()
    for i in range(5):
        data = b"\x89PNG" + bytes([i])
        await upload_file(
            client, channel=CHANNEL, thread_ts="1.0", filename=f"{i}.png", content=data, title="t"
        )
    assert time.monotonic() - started >= 1.0  # five files, two a half second
    assert api.rate_limited == []
    assert [f["filename"] for f in api.files.values()] == [f"{i}.png" for i in range(5)]
    assert all(len(api.calls_to(method)) == 5 for method in UPLOAD_CALLS)


async def test_a_picture_that_cannot_be_drawn_leaves_the_closing_card_alone(
    tmp_path: Path, api: FakeSlack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(picture: object) -> bytes:
        raise RuntimeError("the drawing library broke")

    monkeypatch.setattr("adapters.pictures.draw.to_png", broken)
    caplog.set_level(logging.WARNING, logger="adapters.pictures.render")
    async with open_harness(tmp_path, api) as slack:
        debate_id = await finished(slack)

        [closing] = closing_cards(slack)
        assert "*Statistics*" in blocks_text(closing)
        assert api.files == {} and not any(c.method in UPLOAD_CALLS for c in api.calls)
        failures = [r for r in caplog.records if "could not be drawn" in r.getMessage()]
        assert len(failures) == 1 and debate_id in failures[0].getMessage()


async def test_pictures_off_posts_no_picture(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, results={"picture": False}) as slack:
        await finished(slack)

        assert len(closing_cards(slack)) == 1
        assert api.files == {} and not any(c.method in UPLOAD_CALLS for c in api.calls)


HOSTILE = '<img src=x onerror="alert(1)"> <script>alert(2)</script> [link](javascript:alert(3))'


@pytest.mark.slow
async def test_the_transcript_brings_the_page_beside_the_markdown(tmp_path: Path, api: FakeSlack) -> None:
    api.enforce_limits()
    script = {**SCRIPT, "proposition": [HOSTILE]}
    async with open_harness(tmp_path, api, script=script, results={"picture": False}) as slack:
        debate_id = await finished(slack)

        await slack.mention("transcript", user=ALICE)
        assert "is attached in the debate's thread" in await slack.told(ALICE)
        markdown, page = api.files.values()
        assert markdown["filename"] == f"rostra-{debate_id}.md"
        assert markdown["content"].startswith(f"# {TOPIC}")
        assert page["filename"] == f"rostra-{debate_id}.html"
        assert page["title"] == f"Page to share: {TOPIC}"
        assert (page["channel"], page["thread_ts"]) == (CHANNEL, slack.opening()["ts"])
        html = page["content"]
        assert html.startswith("<!DOCTYPE html>") and f"<h1>{TOPIC}</h1>" in html
        assert html_escape(HOSTILE) in html  # the stored turn stays text
        assert "<img src=x" not in html and "<script>alert" not in html and 'href="javascript:' not in html
        # one upload per file: a URL and a completion each, within the workspace's limits
        assert [c.args["filename"] for c in api.calls_to("files.getUploadURLExternal")] == [
            markdown["filename"],
            page["filename"],
        ]
        assert len(api.calls_to("files.completeUploadExternal")) == 2
        assert not [c for c in api.rate_limited if c.method in UPLOAD_CALLS]
