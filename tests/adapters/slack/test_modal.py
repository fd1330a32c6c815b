"""The Start modal, through the real Bolt app over signed HTTP: `/debate` alone, the message shortcut
and the App Home button open it; submitting it starts the debate the way `/debate <topic>` does;
what is wrong shows inline in the modal and starts nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.inbound.modal.blocks import FORMAT_ACTION
from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import ALICE, BOB, CHANNEL, Harness, blocks_text, open_harness
from tests.adapters.slack.interactive import block_actions, interact, message_shortcut, slash_alone, submit
from tests.adapters.slack.test_documents import DOC_A, DOC_B, PANEL_SCRIPT, panel


def block_ids(view: dict[str, Any]) -> list[str]:
    return [b["block_id"] for b in view["blocks"] if b.get("type") == "input"]


def labels(view: dict[str, Any]) -> dict[str, str]:
    return {b["block_id"]: b["label"]["text"] for b in view["blocks"] if b.get("type") == "input"}


async def opened_modal(slack: Harness, count: int = 1) -> dict[str, Any]:
    await slack.api.wait_until(lambda: len(slack.api.views.opened) >= count, within=5)
    return slack.api.views.opened[count - 1].view


async def test_debate_with_no_text_opens_the_modal_instead_of_the_help(slack: Harness) -> None:
    assert await slash_alone(slack, ALICE) == 200
    view = await opened_modal(slack)
    assert view["title"]["text"] == "Start a debate"
    ids = block_ids(view)
    assert ids[:2] == ["topic", "format"]
    assert "channel" not in ids  # started from a channel: it runs there
    assert {"opt:duration", "opt:rounds", "opt:humans", "opt:human_window"} <= set(ids)
    assert labels(view)["opt:humans"] == "Who may vote"
    assert slack.api.responses == []  # no help wall
    assert slack.ephemerals_to(ALICE) == []
    assert slack.api.views.opened[0].user == ALICE


async def test_submitting_the_modal_starts_the_debate_in_the_channel(slack: Harness) -> None:
    await slash_alone(slack, ALICE)
    await opened_modal(slack)
    modal = slack.api.last_view()
    response = await submit(
        slack,
        ALICE,
        modal.id,
        {"topic": "Should cities ban cars?", "opt:humans": "off", "opt:duration": "2m"},
    )
    assert response.status == 200
    assert await response.text() == ""  # the modal closes
    await slack.wait_running()
    await slack.settle()
    card = slack.opening()
    assert "Should cities ban cars?" in blocks_text(card)
    record = await slack.rt.store.get_debate(await slack.only_debate_id())
    assert record is not None
    assert record.binding.channel == CHANNEL
    assert record.binding.started_by == ALICE
    assert record.spec["options"]["humans"] == "off"
    assert record.spec["options"]["duration"] == 120
    assert slack.thread()[-1]["text"].startswith("The end")


async def test_invalid_input_shows_inline_and_starts_nothing(slack: Harness) -> None:
    await slash_alone(slack, ALICE)
    await opened_modal(slack)
    modal = slack.api.last_view()

    response = await submit(slack, ALICE, modal.id, {"topic": "   "})
    assert json.loads(await response.text()) == {
        "response_action": "errors",
        "errors": {"topic": "Give the motion to debate."},
    }
    response = await submit(slack, ALICE, modal.id, {"topic": "Cars?", "opt:duration": "forever"})
    body = json.loads(await response.text())
    assert body["response_action"] == "errors"
    assert list(body["errors"]) == ["opt:duration"]
    assert "duration" in body["errors"]["opt:duration"]
    response = await submit(slack, ALICE, modal.id, {"topic": "x" * 400})
    body = json.loads(await response.text())
    assert list(body["errors"]) == ["topic"]
    assert "limit is 300" in body["errors"]["topic"]

    assert await slack.rt.store.list_debates() == []
    assert slack.api.calls_to("chat.postMessage") == []


async def test_the_message_shortcut_prefills_the_topic_from_the_message(slack: Harness) -> None:
    assert await message_shortcut(slack, BOB, "Remote work <https://x.test|beats>   the\noffice?") == 200
    view = await opened_modal(slack)
    topic = next(b for b in view["blocks"] if b.get("block_id") == "topic")
    assert topic["element"]["initial_value"] == "Remote work beats (https://x.test) the office?"
    await submit(slack, BOB, slack.api.last_view().id, {"opt:humans": "off"})
    handle = await slack.wait_running()
    assert handle.spec.topic == "Remote work beats (https://x.test) the office?"
    assert handle.binding.started_by == BOB
    await slack.settle()


async def test_the_app_home_button_asks_for_the_channel(slack: Harness) -> None:
    payload = block_actions(
        slack,
        ALICE,
        {"type": "button", "action_id": "rostra_home_start", "block_id": "home", "value": "start"},
    )
    payload["view"] = {"id": "VHOME", "type": "home", "hash": "h", "private_metadata": ""}
    payload["container"] = {"type": "view", "view_id": "VHOME"}
    assert (await interact(slack, payload)).status == 200
    view = await opened_modal(slack)
    assert "channel" in block_ids(view)
    modal = slack.api.last_view()
    body = json.loads(await (await submit(slack, ALICE, modal.id, {"topic": "Tabs or spaces?"})).text())
    assert body == {
        "response_action": "errors",
        "errors": {"channel": "Pick the channel the debate should run in."},
    }
    await submit(
        slack, ALICE, modal.id, {"topic": "Tabs or spaces?", "channel": "CHOME", "opt:humans": "off"}
    )
    handle = await slack.wait_running("CHOME")
    assert handle.spec.topic == "Tabs or spaces?"
    await slack.settle()


async def test_a_trigger_opens_one_modal_once_and_only_for_three_seconds(slack: Harness) -> None:
    trigger = slack.api.trigger(ALICE)
    await slash_alone(slack, ALICE, trigger_id=trigger)
    await opened_modal(slack)
    await slash_alone(slack, ALICE, trigger_id=trigger)  # the same trigger again: Slack refuses it
    late = slack.api.trigger(ALICE)
    slack.api.age_trigger(late, 3.5)
    await slash_alone(slack, ALICE, trigger_id=late)
    await slack.api.wait_until(lambda: len(slack.api.calls_to("views.open")) == 3)
    assert len(slack.api.views.opened) == 1


async def test_changing_the_format_redraws_the_options_and_panel_takes_files(
    tmp_path: Path, api: FakeSlack
) -> None:
    a = api.share_file("streets.md", DOC_A, filetype="markdown")
    b = api.share_file("deliveries.txt", DOC_B)
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slash_alone(slack, ALICE)
        await opened_modal(slack)
        modal = slack.api.last_view()
        assert "documents" not in block_ids(modal.view)
        picked = slack.api.submission_state(modal.id, {"format": "panel"})
        option = next(o for o in modal.view["blocks"][1]["element"]["options"] if o["value"] == "panel")
        action = {
            "type": "static_select",
            "action_id": FORMAT_ACTION,
            "block_id": "format",
            "selected_option": option,
        }
        assert (await interact(slack, block_actions(slack, ALICE, action, view=picked))).status == 200
        await api.wait_until(lambda: "documents" in block_ids(modal.view))
        assert "opt:questions" in block_ids(modal.view)
        assert "opt:duration" not in block_ids(modal.view)

        await submit(
            slack, ALICE, modal.id, {"topic": "Cars in the centre", "format": "panel", "documents": [a, b]}
        )
        await slack.wait_running()
        await slack.settle()
        record = await slack.rt.store.get_debate(await slack.only_debate_id())
        assert record is not None
        assert record.format == "panel"
        assert [d["name"] for d in record.spec["options"]["documents"]] == ["streets.md", "deliveries.txt"]


async def test_the_fake_checks_views_as_slack_does(api: FakeSlack) -> None:
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(token="xoxb-1-rostra-test-token", base_url=api.base_url)
    good = {"type": "modal", "title": {"type": "plain_text", "text": "Start a debate"}, "blocks": []}
    problems: dict[str, dict[str, Any]] = {
        "title over 24 characters": {**good, "title": {"type": "plain_text", "text": "x" * 25}},
        "input without submit": {
            **good,
            "blocks": [
                {
                    "type": "input",
                    "block_id": "a",
                    "label": {"type": "plain_text", "text": "A"},
                    "element": {"type": "plain_text_input", "action_id": "v"},
                }
            ],
        },
        "duplicate block ids": {**good, "blocks": [{"type": "divider", "block_id": "a"}] * 2},
        "metadata over 3000": {**good, "private_metadata": "x" * 3001},
    }
    for what, view in problems.items():
        with pytest.raises(SlackApiError) as info:
            await client.views_open(trigger_id=api.trigger(ALICE), view=view)
        assert info.value.response["error"] == "invalid_arguments", what
    with pytest.raises(SlackApiError) as info:
        await client.views_open(trigger_id="", view=good)
    assert info.value.response["error"] == "invalid_arguments"
    opened = await client.views_open(trigger_id=api.trigger(ALICE), view=good)
    view_id, stale = opened["view"]["id"], opened["view"]["hash"]
    await client.views_update(view_id=view_id, hash=stale, view=good)
    with pytest.raises(SlackApiError) as info:
        await client.views_update(view_id=view_id, hash=stale, view=good)  # someone changed it since
    assert info.value.response["error"] == "hash_conflict"
    with pytest.raises(SlackApiError) as info:
        await client.views_publish(user_id="", view={"type": "home", "blocks": []})
    assert info.value.response["error"] == "invalid_arguments"


async def test_someone_not_allowed_to_start_is_told_in_the_modal(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, slack={"starter_users": [BOB]}) as slack:
        await slash_alone(slack, ALICE)
        await opened_modal(slack)
        response = await submit(slack, ALICE, slack.api.last_view().id, {"topic": "Cars?"})
        body = json.loads(await response.text())
        assert body["response_action"] == "errors"
        assert "may start debates" in body["errors"]["topic"]
        assert await slack.rt.store.list_debates() == []
