"""`transcript` asked again and again attaches one file per debate every ten minutes: the later asks
(at once, or one after another) are told where the earlier file is instead of posting another. The
window is kept in the store (the same on every worker: tests/bot/test_slack_workers.py); an upload
Slack refused does not spend it."""

from __future__ import annotations

import asyncio

from tests.adapters.slack.conftest import ALICE, BOB, CHANNEL, Harness


async def test_asking_for_a_transcript_25_times_attaches_one_file(slack: Harness) -> None:
    await slack.mention("debate Should cities ban cars?")
    handle = await slack.wait_running()
    await handle.wait()
    await slack.settle()
    await asyncio.gather(*(slack.mention("transcript", user=ALICE) for _ in range(20)))
    await slack.api.wait_until(lambda: len(slack.ephemerals_to(ALICE)) >= 20, within=10)
    for count in range(1, 6):
        await slack.mention("transcript", user=BOB)
        await slack.told(BOB, count)
    await slack.settle()
    names = sorted(f["filename"] for f in slack.api.files.values())
    transcripts = [n for n in names if n.endswith((".md", ".html"))]
    assert len(transcripts) == 2  # one Markdown file and its page, for 25 asks
    told = slack.ephemerals_to(BOB)
    assert len(told) == 5
    opening = slack.opening()["ts"]
    link = f"https://rostra-test.slack.com/archives/{CHANNEL}/p{opening.replace('.', '')}"
    assert all(f"was attached in <{link}|the debate's thread>" in text for text in told)


async def test_an_upload_slack_refused_leaves_the_window_to_the_next_ask(slack: Harness) -> None:
    await slack.mention("debate Should cities ban cars?")
    handle = await slack.wait_running()
    await handle.wait()
    await slack.settle()
    slack.api.fail_next("files.getUploadURLExternal", status=200, error="not_allowed_token_type")
    await slack.mention("transcript", user=ALICE)
    refused = await slack.told(ALICE, 1)
    assert "not_allowed_token_type" in refused, refused
    await slack.mention("transcript", user=BOB)
    attached = await slack.told(BOB, 1)
    assert "is attached in the debate's thread" in attached, attached
    await slack.settle()
    transcripts = [
        f["filename"] for f in slack.api.files.values() if f["filename"].endswith((".md", ".html"))
    ]
    assert sorted(transcripts) == sorted(f"rostra-{handle.debate_id}.{x}" for x in ("md", "html"))
