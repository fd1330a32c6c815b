"""A transcript asked for while Slack's file uploads fail, through the real Bolt app over signed
HTTP: the upload waits Slack out (as a reply to the person does), and once Slack is back the
Markdown and the page are in the debate's thread, once each, and the person is told they are there.
It used to give up after slack_sdk's own retries (a second or two) and tell the person it could not
attach the transcript."""

from __future__ import annotations

import time

import pytest

from testkit.slack_api import DROP_AFTER
from tests.adapters.slack.conftest import ALICE, CHANNEL, Harness

FILE_METHODS = ("files.getUploadURLExternal", "files.completeUploadExternal", "files.list")


def transcripts(slack: Harness) -> list[str]:
    """The transcript files shared in the channel, by name."""
    return sorted(
        f["filename"]
        for f in slack.api.files.values()
        if f.get("shared") and f.get("channel") == CHANNEL and f["filename"].startswith("rostra-")
    )


@pytest.mark.parametrize("seconds", [1.0, pytest.param(30.0, marks=pytest.mark.slow)])
async def test_a_transcript_asked_for_while_slack_fails_is_attached_once_slack_is_back(
    slack: Harness, seconds: float
) -> None:
    """Slack shares the Markdown but its answer is lost, then fails every file call (the look for
    the lost one too) for a while: the Markdown is found shared, not uploaded again, and the page
    follows it once Slack is back."""
    await slack.mention("debate Should cities ban cars?")
    handle = await slack.wait_running()
    await handle.wait()
    await slack.settle()
    shown = transcripts(slack)  # the debate's own files (a format's Markdown), if any
    slack.api.fail_next("files.completeUploadExternal", status=DROP_AFTER)
    back = time.monotonic() + seconds
    for method in FILE_METHODS:
        slack.api.fail_next(method, status=500, error="internal_error", for_seconds=seconds)
    await slack.mention("transcript")
    await slack.api.wait_until(lambda: bool(slack.ephemerals_to(ALICE)), within=seconds + 60)
    assert time.monotonic() >= back  # it waited Slack out
    assert slack.ephemerals_to(ALICE) == [
        f"The transcript of *Should cities ban cars?* (debate `{handle.debate_id}`)"
        " is attached in the debate's thread."
    ]
    names = [f"rostra-{handle.debate_id}.html", f"rostra-{handle.debate_id}.md"]
    assert transcripts(slack) == sorted([*shown, *names])  # each once
    thread = {f.get("thread_ts") for f in slack.api.files.values() if f["filename"] in names}
    assert thread == {slack.opening()["ts"]}
