"""Serving: Socket Mode envelopes over a local WebSocket drive the same app; startup checks the token."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from adapters.slack import create_app
from adapters.slack.serve import check_token, run_socket_mode
from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import VotingClosed
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    ALICE,
    APP_TOKEN,
    BOB,
    BOT_TOKEN,
    CAROL,
    CHANNEL,
    SCRIPT,
    Harness,
    envelope,
    mention_event,
    open_harness,
    reaction_event,
    slash_fields,
)
from tests.adapters.slack.test_votes import HOLD, people, tie_script, until
from tests.helpers import make_config, write_script


async def test_an_event_over_the_socket_is_acked_and_starts_a_debate(tmp_path: Path, api: FakeSlack) -> None:
    config = make_config(
        tmp_path,
        model={"script": str(write_script(tmp_path, SCRIPT)), "latency": 0},
        slack={"api_url": api.base_url, "edit_interval": 0, "post_results": False},
        limits={"user_cooldown": 0, "max_rounds": 1},
        formats={"arena": {"exchanges_per_round": 1}},
    )
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN)  # no signing secret needed
    async with Runtime(config, clock=FakeClock(), secrets=secrets) as rt:
        app = create_app(rt)
        stop = asyncio.Event()
        serving = asyncio.create_task(run_socket_mode(app, APP_TOKEN, stop))
        try:
            payload = envelope(mention_event("debate Should cities ban cars?"))
            ack = await api.push_envelope("events_api", payload)
            assert set(ack) == {"envelope_id"}

            help_ack = await api.push_envelope(
                "slash_commands", slash_fields("help", user="UBOB", channel=CHANNEL, response_url=api.root)
            )
            assert "Rostra runs debates between AI personas" in help_ack["payload"]["text"]
            assert help_ack["payload"]["response_type"] == "ephemeral"

            await api.wait_until(lambda: rt.manager.find(platform="slack", channel=CHANNEL) is not None)
            await asyncio.wait_for(app.front.wait_idle(), 20)
            (opening,) = api.top_level(CHANNEL)
            thread = api.thread(CHANNEL, opening["ts"])
            assert thread[-1]["text"].startswith("The end")
            assert [c.token for c in api.calls_to("apps.connections.open")] == [APP_TOKEN]
        finally:
            stop.set()
            await serving
            await app.aclose()


async def test_missing_scopes_are_named_at_startup(
    slack: Harness, api: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    api.scopes = (
        "app_mentions:read,chat:write,commands,reactions:read,reactions:write,channels:read,groups:read"
    )
    with caplog.at_level(logging.WARNING, logger="adapters.slack.serve"):
        assert await check_token(slack.app) == "Rostra Test"
    missing = (
        "channels:history, chat:write.customize, files:read, files:write, groups:history, im:history,"
        " usergroups:read"
    )
    assert f"lacks scopes {missing}" in caplog.text


@pytest.mark.slow
async def test_reactions_made_while_the_socket_was_down_count_once_it_is_back(
    tmp_path: Path, api: FakeSlack
) -> None:
    """The Socket Mode connection drops while people decide a tie; Slack keeps the reactions made
    meanwhile and sends their events again only a minute or more later, after the window. Once the
    socket is back (Slack's hello), the open card is read again: the card counts as it stands.
    (Before, those reactions never counted.)"""
    clock = HeldClock(hold=HOLD)
    async with open_harness(tmp_path, api, script=tie_script(), clock=clock) as slack:
        stop = asyncio.Event()
        serving = asyncio.create_task(run_socket_mode(slack.app, APP_TOKEN, stop))
        try:
            await api.wait_until(lambda: api.ws is not None)
            await api.push_envelope("events_api", envelope(mention_event("debate Should cities ban cars?")))
            handle = await slack.wait_running()
            await api.wait_until(lambda: len(api.calls_to("reactions.add")) == 2 and clock.waiting == 4)
            card = api.calls_to("reactions.add")[0].args["timestamp"]
            await clock.release(4)  # the observers vote: 2–2, so the people decide
            await api.wait_until(lambda: handle.human_vote_open("v1"))
            api.react(CHANNEL, card, "white_check_mark", BOB)
            await api.push_envelope(
                "events_api", envelope(reaction_event(True, BOB, "white_check_mark", card))
            )
            await until(slack, handle, {BOB: "keep"})

            api.refuse_sockets = True  # the connection drops and cannot be made again for a while
            dropped = api.ws
            assert dropped is not None
            await dropped.close()
            api.react(CHANNEL, card, "x", ALICE)  # stored by Slack; no event reaches Rostra
            api.react(CHANNEL, card, "x", CAROL)
            api.react(CHANNEL, card, "white_check_mark", BOB, added=False)
            await asyncio.sleep(1.0)
            assert people(handle) == {BOB: "keep"}

            api.refuse_sockets = False
            await api.wait_until(lambda: api.ws is not None and api.ws is not dropped, within=30)
            await until(slack, handle, {ALICE: "replace", CAROL: "replace"})
            await clock.release()  # the window closes
            await slack.settle()
            (closed,) = [e for e in await slack.events(handle.debate_id) if isinstance(e, VotingClosed)]
            assert closed.human_tally == {"keep": 0, "replace": 2}
            assert (closed.decision, closed.tie_broken_by) == ("replace", "humans")
        finally:
            stop.set()
            await serving
