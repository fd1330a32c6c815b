"""Starting from the Start modal in a channel Rostra is not in: one message saying so (invite it),
never "Starting a debate…" first and then the contrary."""

from __future__ import annotations

from tests.adapters.slack.conftest import ALICE, Harness
from tests.adapters.slack.interactive import slash_alone, submit
from tests.adapters.slack.test_modal import opened_modal


async def test_a_channel_without_the_bot_gets_one_message(slack: Harness) -> None:
    await slash_alone(slack, ALICE)
    await opened_modal(slack)
    slack.api.fail_next("chat.postMessage", status=200, error="not_in_channel", when=lambda a: "blocks" in a)
    await submit(slack, ALICE, slack.api.last_view().id, {"topic": "Should cities ban cars?"})
    told = await slack.told(ALICE)
    await slack.settle()
    assert slack.ephemerals_to(ALICE) == [told]
    assert "I can't post in this channel (not_in_channel)" in told
    assert await slack.rt.store.list_debates() == []
