"""Who may stop a debate and who gets a transcript by id."""

from __future__ import annotations

from pathlib import Path

from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    DAN,
    SLOW_FIRST_TURN,
    Harness,
    open_harness,
)

PRIVATE = "G0PRIVATE"


async def _said(slack: Harness, text: str, user: str, channel: str = CHANNEL) -> str:
    reply = await slack.slash(text, user=user, channel=channel)
    return str(reply.body["text"])


async def test_by_default_only_the_starter_an_admin_or_the_channel_creator_may_stop(
    tmp_path: Path, api: FakeSlack
) -> None:
    clock = HeldClock(hold=5)
    api.usergroups["SADMINS"] = [CAROL]
    api.channel_creators[CHANNEL] = DAN
    async with open_harness(
        tmp_path, api, script=SLOW_FIRST_TURN, clock=clock, slack={"admin_groups": ["SADMINS"]}
    ) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        # anyone may start (no starter lists), but that does not let Bob stop Alice's debate
        assert "Only the person who started this debate" in await _said(slack, "stop", BOB)
        assert not handle.done
        assert "Stopping the debate" in await _said(slack, "stop", CAROL)  # an admin group member
        await slack.settle()

        await slack.mention("debate Should towns ban cars?", user=BOB)
        second = await slack.wait_running()
        assert "Stopping the debate" in await _said(slack, "stop", DAN)  # the channel's creator
        await slack.settle()
        assert second.done


async def test_a_transcript_by_id_is_served_only_in_the_debates_channel(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with open_harness(tmp_path, api) as slack:
        await slack.mention("debate Secret plans for the offsite?", channel=PRIVATE)
        await slack.wait_running(PRIVATE)
        await slack.settle()
        debate_id = await slack.only_debate_id()

        said = await _said(slack, f"transcript {debate_id}", BOB)  # asked from another channel
        assert said == f"🚫 There is no debate `{debate_id}` in this channel: ask for it where it was held."
        assert "Secret plans" not in said
        assert not [f for f in api.files.values() if f["filename"] != f"rostra-{debate_id}-results.png"]

        assert "Attaching the transcript" in await _said(
            slack, f"transcript {debate_id}", ALICE, channel=PRIVATE
        )
        transcript = f"rostra-{debate_id}.md"
        await api.wait_until(  # upload completed
            lambda: any(f.get("shared") and f["filename"] == transcript for f in api.files.values())
        )
        [upload] = [f for f in api.files.values() if f["filename"] == transcript]
        assert upload["channel"] == PRIVATE
