"""Reactions from other apps' bot users are no one's vote (as in Discord): Slack's reaction events
carry no bot flag, so the user is looked up once with users.info and remembered."""

from __future__ import annotations

from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.ballots.reactions import read_card
from core.events import VotingClosed
from testkit.slack_api import BOT_USER, FakeSlack
from testkit.slack_world import BOT_TOKEN, CHANNEL
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, SCRIPT, open_harness
from tests.adapters.slack.test_votes import HOLD, until

OTHER_APP = "UOTHERAPP"


async def test_another_apps_bot_user_does_not_vote(tmp_path: Path, api: FakeSlack) -> None:
    api.bot_users.add(OTHER_APP)
    clock = HeldClock(hold=HOLD)
    script = {**SCRIPT, "observer": [{"vote": "keep", "reason": "Fine."}]}
    async with open_harness(tmp_path, api, script=script, clock=clock, arena={"humans": "vote"}) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: handle.human_vote_open("v1") and len(api.calls_to("reactions.add")) == 2)
        card = api.calls_to("reactions.add")[0].args["timestamp"]
        for _ in range(2):
            await slack.react(OTHER_APP, "x", card)
        await slack.react(ALICE, "x", card)
        await until(slack, handle, {ALICE: "replace"})
        await clock.release()
        await slack.settle()
        (closed,) = [e for e in await slack.events(handle.debate_id) if isinstance(e, VotingClosed)]
        assert closed.human_tally == {"keep": 0, "replace": 1}  # Alice's vote; the bot's none
        asked = [c.args["user"] for c in api.calls_to("users.info")]
        assert sorted(asked) == [ALICE, OTHER_APP]  # each looked up once


async def test_reading_a_card_back_leaves_out_every_bots_reactions(api: FakeSlack) -> None:
    """What a card shows when a window opens (or after a restart) counts people only: the ballot's
    own seeds and other apps' bot users are left out, each user looked up once."""
    api.bot_users.add(OTHER_APP)
    client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url)
    posted = await client.chat_postMessage(channel=CHANNEL, text="Vote: Should Ada keep the floor?")
    card = str(posted["ts"])
    for user, name in ((BOT_USER, "white_check_mark"), (BOT_USER, "x"), (OTHER_APP, "x"), (ALICE, "x")):
        api.react(CHANNEL, card, name, user)
    on_card = await read_card(client, CHANNEL, card, what="test", bot_user_id=BOT_USER)
    assert on_card == {ALICE: ["x"]}
    assert sorted(c.args["user"] for c in api.calls_to("users.info")) == [ALICE, OTHER_APP]
