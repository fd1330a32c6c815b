"""`transcript` asked again and again attaches one file per debate every ten minutes: the later asks
(at once, or one after another) are told where the earlier file is instead of posting another."""

from __future__ import annotations

import asyncio

from adapters.transcript_files import TranscriptLimit
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


def test_the_window_reopens_after_ten_minutes_and_a_failed_upload_frees_it() -> None:
    now = [0.0]
    limit = TranscriptLimit(clock=lambda: now[0])
    limit.begin("d1")
    assert limit.earlier("d1") is not None and limit.earlier("d2") is None
    now[0] = 599.0
    assert limit.earlier("d1") is not None
    now[0] = 600.0
    assert limit.earlier("d1") is None
    limit.begin("d1")
    limit.failed("d1")
    assert limit.earlier("d1") is None
