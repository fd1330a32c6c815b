"""The Start modal refuses what it cannot take before it closes, through the real Bolt app over
signed HTTP: a forged number field (a superscript digit, 5,000 digits) is refused inline instead of an
HTTP 500; a channel that already has a debate is refused inline; a trigger Slack no longer accepts
(too late, or used twice) is answered privately instead of with silence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import ALICE, CHANNEL, SLOW_FIRST_TURN, Harness, open_harness
from tests.adapters.slack.interactive import slash_alone, submit
from tests.adapters.slack.test_modal import opened_modal


@pytest.mark.parametrize("forged", ["²", "9" * 5000, "-" + "1" * 40, "١٢"])
async def test_a_forged_number_field_is_refused_inline(slack: Harness, forged: str) -> None:
    await slash_alone(slack, ALICE)
    await opened_modal(slack)
    modal = slack.api.last_view()
    response = await submit(slack, ALICE, modal.id, {"topic": "Cars?", "opt:exchanges_per_round": forged})
    assert response.status == 200
    body = json.loads(await response.text())
    assert body["response_action"] == "errors"
    assert body["errors"] == {
        "opt:exchanges_per_round": "exchanges_per_round must be a whole number of at most 9 digits."
    }
    assert await slack.rt.store.list_debates() == []


async def test_a_channel_that_has_a_debate_is_refused_in_the_modal(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN) as slack:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        ephemerals = len(api.calls_to("chat.postEphemeral"))
        await slash_alone(slack, ALICE)
        await opened_modal(slack)
        response = await submit(slack, ALICE, slack.api.last_view().id, {"topic": "Tabs or spaces?"})
        body = json.loads(await response.text())
        assert body["response_action"] == "errors"
        [(block, says)] = body["errors"].items()
        assert block == "topic"
        assert "already running in that channel" in says and "Should cities ban cars?" in says
        assert len(api.calls_to("chat.postEphemeral")) == ephemerals  # nothing more after it closed
        assert len(await slack.rt.store.list_debates()) == 1


async def test_a_late_or_reused_trigger_is_answered_privately(slack: Harness) -> None:
    trigger = slack.api.trigger(ALICE)
    await slash_alone(slack, ALICE, trigger_id=trigger)
    await opened_modal(slack)
    await slash_alone(slack, ALICE, trigger_id=trigger)  # used twice
    late = slack.api.trigger(ALICE)
    slack.api.age_trigger(late, 3.5)
    await slash_alone(slack, ALICE, trigger_id=late)  # too late
    await slack.api.wait_until(lambda: len(slack.api.calls_to("chat.postEphemeral")) == 2)
    for call in slack.api.calls_to("chat.postEphemeral"):
        assert call.args["user"] == ALICE and call.args["channel"] == CHANNEL
        assert "could not open in time" in call.args["text"]
