"""Slack down for a while: the debate pauses (no model calls, its clock stopped), probes Slack,
and once Slack answers again shows every final text it owed, in order, with no half-written
message left; past the limit it stops, resumable, instead of talking to nobody."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from adapters.delivery import outage
from adapters.slack.delivery import rates
from core.clock import RealClock
from core.events import DebateCompleted, Notice, TurnCompleted, TurnStarted
from testkit.slack_api import DROP, DROP_AFTER, FakeSlack
from tests.adapters.slack.conftest import Harness, open_harness

SCALE = 0.04
"""Time compressed: Slack's outage and Rostra's probing run 25 times faster than on the clock."""
CURSOR = "▌"


@pytest.fixture(autouse=True)
def compressed_probing(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = outage.OutageLimits(limit=300 * SCALE, first_probe=2 * SCALE, longest_probe=30 * SCALE)
    monkeypatch.setattr(outage, "DEFAULT_LIMITS", limits)


def persona_posts(args: dict[str, object]) -> bool:
    return "username" in args


async def test_a_25_s_outage_of_500s_loses_no_final_text_and_leaves_no_cursor(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with open_harness(tmp_path, api, slack={"streaming": True}) as slack:
        api.fail_next(
            "chat.postMessage", status=500, error="internal_error", for_seconds=25 * SCALE, when=persona_posts
        )
        began = time.monotonic()
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await asyncio.wait_for(handle.wait(), 30)
        await slack.settle()
        debate_id = handle.debate_id
        events = await slack.events(debate_id)
        assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "max_rounds"
        assert time.monotonic() - began >= 25 * SCALE  # it did wait the outage out
        thread = slack.thread()
        texts = [m["text"] for m in thread]
        done = [e for e in events if isinstance(e, TurnCompleted)]
        assert len(done) == 5
        for turn in done:  # every final text is in the thread, as often as it was spoken
            spoken = sum(t.text == turn.text for t in done)
            assert sum(turn.text.strip() in text for text in texts) == spoken, turn.text
        assert not any(CURSOR in text for text in texts)
        assert not any("Slack refused" in text for text in texts)
        assert len(api.calls_to("chat.postMessage")) > len(thread)  # refused, then sent again


@pytest.mark.slow
async def test_a_lasting_outage_pauses_model_calls_and_stops_resumable(
    tmp_path: Path, api: FakeSlack
) -> None:
    # a model that takes real time, as one does: the debate is still speaking when Slack goes down
    async with open_harness(tmp_path, api, clock=RealClock(), latency=0.05) as slack:
        api.fail_next(
            "chat.postMessage", status=500, error="internal_error", for_seconds=60.0, when=persona_posts
        )
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: len(api.calls_to("chat.postMessage")) >= 3)
        await asyncio.sleep(50 * SCALE)  # well into the outage: the debate has paused by now
        debate_id = handle.debate_id
        started = [e for e in await slack.events(debate_id) if isinstance(e, TurnStarted)]
        result = await asyncio.wait_for(handle.wait(), 30)
        assert result.reason == "interrupted"
        events = await slack.events(debate_id)
        assert [e for e in events if isinstance(e, TurnStarted)] == started  # no model call since
        assert len(started) < 5  # the debate did not run on to its end unseen
        [notice] = [e for e in events if isinstance(e, Notice) and e.code == "platform_unavailable"]
        assert "Slack was unavailable" in notice.message
        record = await slack.rt.store.get_debate(debate_id)
        assert record is not None and record.status == "interrupted"


UPLOAD_OUTAGE = 8.0
"""Seconds Slack's file calls fail: past slack_sdk's own retries of them."""


async def _debate_with_picture(slack: Harness) -> str:
    await slack.mention("debate Should cities ban cars? humans=off")
    handle = await slack.wait_running()
    await asyncio.wait_for(handle.wait(), 60)
    await slack.settle()
    return handle.debate_id


def _pictures_shared(api: FakeSlack, debate_id: str) -> list[dict[str, object]]:
    name = f"rostra-{debate_id}-results.png"
    return [f for f in api.files.values() if f["filename"] == name and f.get("shared")]


@pytest.mark.slow
@pytest.mark.parametrize("method", ["files.getUploadURLExternal", "files.completeUploadExternal"])
async def test_the_results_picture_waits_out_slack_failing_its_uploads(
    tmp_path: Path, api: FakeSlack, method: str
) -> None:
    """Slack answers 500 to a file call for longer than its SDK retries, as the closing picture goes:
    the picture follows the closing card once Slack answers, shared once. (It was dropped.)"""
    async with open_harness(tmp_path, api) as slack:
        api.fail_next(method, status=500, error="internal_error", for_seconds=UPLOAD_OUTAGE)
        began = time.monotonic()
        debate_id = await _debate_with_picture(slack)
        [picture] = _pictures_shared(api, debate_id)
        assert picture["thread_ts"] == slack.opening()["ts"]
        assert time.monotonic() - began >= UPLOAD_OUTAGE  # it waited, then went
        assert sum("The end" in m["text"] for m in slack.thread()) == 1


async def test_a_picture_shared_with_slacks_answer_lost_is_not_shared_again(
    tmp_path: Path, api: FakeSlack
) -> None:
    """files.completeUploadExternal carried out, its answer lost (the connection dropped): the
    channel's files are looked through, the picture is found there, and it is not uploaded again."""
    async with open_harness(tmp_path, api) as slack:
        api.fail_next("files.completeUploadExternal", status=DROP_AFTER)
        debate_id = await _debate_with_picture(slack)
        assert len(_pictures_shared(api, debate_id)) == 1
        assert len(api.calls_to("files.getUploadURLExternal")) == 1
        assert len(api.calls_to("files.list")) == 1


async def test_without_files_read_a_picture_whose_answer_was_lost_is_shared_again(
    tmp_path: Path, api: FakeSlack
) -> None:
    """The channel's files cannot be listed (the app lacks `files:read`): the picture is uploaded
    again rather than waited on for good, and the closing post is not held up."""
    async with open_harness(tmp_path, api) as slack:
        api.fail_next("files.completeUploadExternal", status=DROP)
        api.fail_next("files.list", status=200, error="missing_scope")
        debate_id = await _debate_with_picture(slack)
        assert len(_pictures_shared(api, debate_id)) == 1
        assert len(api.calls_to("files.getUploadURLExternal")) == 2


async def test_read_backs_of_a_distributed_app_stay_within_one_a_minute(
    tmp_path: Path, api: FakeSlack
) -> None:
    """Two persona posts lose their answer (the connection drops before Slack takes them): each is
    looked for in the thread before it is posted again, at most once per (compressed) minute, with
    at most 15 messages asked for; both end up shown once."""
    async with open_harness(tmp_path, api, slack={"install": "distributed"}) as slack:
        for _ in range(2):
            api.fail_next("chat.postMessage", status=DROP, when=persona_posts)
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await asyncio.wait_for(handle.wait(), 30)
        await slack.settle()
        reads = api.calls_to("conversations.replies")
        assert len(reads) == 2
        minute = rates.DISTRIBUTED_READ_BACKS[1]  # 60 s, compressed for tests
        assert reads[1].at - reads[0].at >= minute * 0.95
        assert all(int(r.args["limit"]) <= 15 and r.args.get("oldest") for r in reads)
        events = await slack.events(handle.debate_id)
        done = [e for e in events if isinstance(e, TurnCompleted)]
        assert len([m for m in slack.thread() if m.get("username")]) == len(done)  # none lost or doubled
