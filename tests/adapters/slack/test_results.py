"""When a debate ends, its result reaches the channel (a thread reply also sent to the channel) and
the opening card says it: through the real Bolt app over signed HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.slack.inbound.home.blocks import thread_link
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import CHANNEL, SLOW_FIRST_TURN, Harness, blocks_text, open_harness

POSTING = {"post_results": True}


async def test_the_result_reaches_the_channel_and_the_card(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, slack=POSTING) as slack:
        await slack.mention("debate Should cities ban cars? humans=off")
        handle = await slack.wait_running()
        await slack.settle()
        card = slack.opening()
        (broadcast,) = [c for c in api.calls_to("chat.postMessage") if c.args.get("reply_broadcast")]
        assert broadcast.args["channel"] == CHANNEL
        assert broadcast.args["thread_ts"] == card["ts"]
        lines = broadcast.args["text"].splitlines()
        assert lines[0] == "🏁 *Debate over:* Should cities ban cars?"
        assert lines[1].startswith("🏆 Last vote: ") and lines[1].endswith(("keeps the floor", "is replaced"))
        assert lines[2] == "_Both sides agreed streets matter; they split on who pays for the change._"
        assert lines[3] == f"<{thread_link(CHANNEL, card['ts'])}|The whole debate is in its thread>"
        # after the closing card, and only once
        thread = slack.thread()
        assert thread[-1]["text"] == broadcast.args["text"]
        assert thread[-2]["text"].startswith("The end")
        shown = blocks_text(card)
        assert "🏁 Finished:" in shown
        assert f"🏆 *{lines[1].removeprefix('🏆 ')}*" in shown
        assert handle.done


async def test_a_stopped_debate_says_so_in_the_channel(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=clock, slack=POSTING) as slack:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        await api.wait_until(lambda: clock.waiting == 1)
        await slack.mention("stop")
        await slack.settle()
        (broadcast,) = [c for c in api.calls_to("chat.postMessage") if c.args.get("reply_broadcast")]
        first = broadcast.args["text"].splitlines()[0]
        assert first == "🏁 *Debate over:* Should cities ban cars? (stopped by a member of the channel)"
        assert "🏆" not in broadcast.args["text"]


async def test_results_can_stay_in_the_thread(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, slack={"post_results": False}) as slack:
        await slack.mention("debate Should cities ban cars? humans=off")
        await slack.wait_running()
        await slack.settle()
        assert not [c for c in api.calls_to("chat.postMessage") if c.args.get("reply_broadcast")]


async def test_a_debate_asked_for_in_a_thread_is_linked_from_that_thread(slack: Harness) -> None:
    asked_in = "1700000000.000500"
    await slack.mention("debate Should cities ban cars? humans=off", thread_ts=asked_in)
    await slack.wait_running()
    await slack.settle()
    card = slack.opening()
    (pointer,) = api_posts_in(slack, asked_in)
    link = thread_link(CHANNEL, card["ts"])
    assert pointer["text"] == f"🎙️ The debate on *Should cities ban cars?* runs in <{link}|its own thread>."
    assert slack.thread()[-1]["text"].startswith("The end")  # the debate itself is in the card's thread


def api_posts_in(slack: Harness, thread_ts: str) -> list[dict[str, Any]]:
    return slack.api.thread(CHANNEL, thread_ts)
