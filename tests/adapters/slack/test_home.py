"""The App Home tab and direct messages, through the real Bolt app over signed HTTP."""

from __future__ import annotations

import time
from typing import Any

from adapters.slack.inbound.home.blocks import thread_link
from tests.adapters.slack.conftest import ALICE, BOB, CHANNEL, Harness


def home_event(user: str, tab: str = "home") -> dict[str, Any]:
    return {
        "type": "app_home_opened",
        "user": user,
        "channel": "DHOME",
        "tab": tab,
        "event_ts": f"{time.time():.6f}",
    }


def home_text(view: dict[str, Any]) -> str:
    return "\n".join(
        b["text"]["text"] if "text" in b else " ".join(e.get("text", "") for e in b.get("elements", []))
        for b in view["blocks"]
        if b["type"] in ("section", "context", "header")
    )


async def test_opening_the_home_tab_publishes_how_to_and_a_start_button(slack: Harness) -> None:
    await slack.event(home_event(ALICE))
    await slack.api.wait_until(lambda: ALICE in slack.api.views.homes)
    view = slack.api.views.homes[ALICE]
    text = home_text(view)
    assert "`/debate`" in text
    assert "Debate this message" in text
    assert "No debate is running in this workspace." in text
    buttons = [e for b in view["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert [(b["action_id"], b["text"]["text"]) for b in buttons] == [("rostra_home_start", "Start a debate")]


async def test_the_home_tab_lists_running_and_finished_debates_with_links(slack: Harness) -> None:
    await slack.mention("debate Should cities ban cars? humans=off")
    await slack.wait_running()
    await slack.settle()
    first_ts = slack.opening()["ts"]
    hold = slack.api.hold_next("chat.postMessage", when=lambda a: a.get("thread_ts") is not None)
    await slack.mention("debate Tabs or spaces? humans=off", channel="COTHER")
    await slack.wait_running("COTHER")
    await slack.api.wait_until(lambda: hold.held)
    other_ts = slack.opening("COTHER")["ts"]

    await slack.event(home_event(BOB))
    await slack.api.wait_until(lambda: BOB in slack.api.views.homes)
    text = home_text(slack.api.views.homes[BOB])
    running, finished = text.split("*Recently finished*")
    assert f"<{thread_link('COTHER', other_ts)}|Tabs or spaces?>" in running
    assert "<#COTHER>" in running
    assert "Should cities ban cars?" not in running
    assert f"<{thread_link(CHANNEL, first_ts)}|Should cities ban cars?>" in finished
    assert "🏁 finished" in finished
    hold.gate.set()
    await slack.settle()


async def test_the_messages_tab_does_not_publish(slack: Harness) -> None:
    await slack.event(home_event(ALICE, tab="messages"))
    await slack.event(home_event(BOB))
    await slack.api.wait_until(lambda: BOB in slack.api.views.homes)
    assert ALICE not in slack.api.views.homes


def dm_event(text: str, **extra: Any) -> dict[str, Any]:
    ts = f"{time.time():.6f}"
    return {
        "type": "message",
        "channel": "DALICE",
        "channel_type": "im",
        "user": ALICE,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        **extra,
    }


async def test_a_direct_message_gets_a_short_helpful_answer(slack: Harness) -> None:
    await slack.event(dm_event("hello? how do I use you"))
    await slack.api.wait_until(lambda: bool(slack.api.calls_to("chat.postMessage")))
    (answer,) = slack.api.calls_to("chat.postMessage")
    assert answer.args["channel"] == "DALICE"
    assert "/debate" in answer.args["text"]
    assert "Home" in answer.args["text"]
    assert len(answer.args["text"]) < 400


async def test_bots_and_edits_in_the_dm_get_no_answer(slack: Harness) -> None:
    await slack.event(dm_event("I am a bot", bot_id="BOTHER", user="UOTHERBOT"))
    await slack.event(dm_event("edited", subtype="message_changed"))
    await slack.event({**dm_event("in a channel"), "channel": CHANNEL, "channel_type": "channel"})
    await slack.event(dm_event("a person"))
    await slack.api.wait_until(lambda: bool(slack.api.calls_to("chat.postMessage")))
    assert len(slack.api.calls_to("chat.postMessage")) == 1
