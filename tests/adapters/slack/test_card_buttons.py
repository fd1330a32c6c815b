"""Stop, Status and Transcript buttons on the opening card, through the real Bolt app over signed HTTP:
they do what the commands do, refuse the wrong person privately, and keep working after a restart
(fixed action ids; the card names its debate)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.slack.controls.handlers import ENDED
from core.events import DebateCompleted
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, BOB, CAROL, CHANNEL, SLOW_FIRST_TURN, Harness, open_harness
from tests.adapters.slack.interactive import block_actions, interact

STOP_CLICK = {"type": "button", "action_id": "rostra_card_stop", "block_id": "rostra_card", "value": "stop"}


def card_buttons(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        e["action_id"]: e for b in card.get("blocks") or [] if b["type"] == "actions" for e in b["elements"]
    }


async def click(slack: Harness, user: str, action_id: str) -> None:
    card = slack.opening()
    button = card_buttons(card)[action_id]
    action = {"type": "button", "action_id": action_id, "block_id": "rostra_card", "value": button["value"]}
    response = await interact(slack, block_actions(slack, user, action, message=card))
    assert response.status == 200


async def test_buttons_on_the_card_stop_status_and_transcript(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(
        tmp_path, api, script=SLOW_FIRST_TURN, clock=clock, slack={"starter_users": [ALICE]}
    ) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: clock.waiting == 1)
        await api.wait_until(lambda: "rostra_card_status" in card_buttons(slack.opening()))
        buttons = card_buttons(slack.opening())
        assert list(buttons) == ["rostra_card_stop", "rostra_card_status", "rostra_card_transcript"]
        confirm = buttons["rostra_card_stop"]["confirm"]
        assert confirm["title"]["text"] == "Stop this debate?"
        assert confirm["style"] == "danger"

        await click(slack, BOB, "rostra_card_status")
        status = await slack.told(BOB)
        assert "*Should cities ban cars?* (arena" in status
        assert "phase *debating*" in status

        await click(slack, CAROL, "rostra_card_stop")  # not the starter, not a starter_user
        assert "Only the person who started this debate" in await slack.told(CAROL)
        assert not handle.done

        await click(slack, ALICE, "rostra_card_stop")
        assert "Stopping the debate on *Should cities ban cars?*" in await slack.told(ALICE)
        await slack.settle()
        end = (await slack.events(handle.debate_id))[-1]
        assert isinstance(end, DebateCompleted) and end.reason == "stopped"
        assert list(card_buttons(slack.opening())) == ["rostra_card_transcript"]  # only what still works

        await click(slack, BOB, "rostra_card_transcript")
        assert "is attached in the debate's thread" in await slack.told(BOB, 2)
        (upload,) = [f for f in api.files.values() if f["filename"].endswith(".md")]
        assert upload["filename"] == f"rostra-{handle.debate_id}.md"
        assert (upload["channel"], upload["thread_ts"]) == (CHANNEL, slack.opening()["ts"])


async def test_the_buttons_work_after_a_restart(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api) as before:
        await before.mention("debate Should cities ban cars? humans=off")
        handle = await before.wait_running()
        await before.settle()
        old_card = before.opening()
    async with open_harness(tmp_path, api) as after:
        await click(after, BOB, "rostra_card_transcript")
        assert "is attached in the debate's thread" in await after.told(BOB)
        (upload,) = [f for f in api.files.values() if f["filename"].endswith(".md")]
        assert upload["filename"] == f"rostra-{handle.debate_id}.md"
        assert upload["thread_ts"] == old_card["ts"]

        # a Stop pressed on a card whose debate is over (an old message still showing it)
        action = STOP_CLICK
        await interact(after, block_actions(after, CAROL, action, message=old_card))
        assert await after.told(CAROL) == ENDED


async def test_a_stop_on_an_old_card_never_stops_the_newer_debate(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=clock) as slack:
        await slack.mention("debate First? humans=off")
        await slack.wait_running()
        old_card = slack.opening()
        await clock.release()
        await slack.settle()
        await slack.mention("debate Second?")
        newer = await slack.wait_running()
        action = STOP_CLICK
        await interact(slack, block_actions(slack, ALICE, action, message=old_card))
        assert await slack.told(ALICE) == ENDED
        assert not newer.done
        await clock.release()
        await slack.settle()


async def test_stop_works_on_a_debate_resumed_after_a_restart(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=HeldClock(hold=5)) as before:
        await before.mention("debate Should cities ban cars?")
        handle = await before.wait_running()
        card = before.opening()
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=clock) as after:
        [resumed] = await after.app.resume_debates()
        assert resumed.debate_id == handle.debate_id
        await interact(after, block_actions(after, ALICE, STOP_CLICK, message=card))
        assert "Stopping the debate on *Should cities ban cars?*" in await after.told(ALICE)
        await after.settle()
        end = (await after.events(handle.debate_id))[-1]
        assert isinstance(end, DebateCompleted) and end.reason == "stopped"
