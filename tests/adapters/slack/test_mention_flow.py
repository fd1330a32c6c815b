"""A signed app_mention over real HTTP starts a debate that plays out in the thread."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from core.events import DebateCompleted, DebateStarted, TurnCompleted, TurnStarted, VotingStarted
from testkit.slack_api import BOT_USER, TEAM, FakeSlack
from tests.adapters.slack.conftest import (
    ALICE,
    CHANNEL,
    SCRIPT,
    Harness,
    blocks_text,
    envelope,
    mention_event,
    open_harness,
    sign,
)


async def test_a_signed_mention_runs_a_debate_in_the_thread(slack: Harness) -> None:
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()

    debate_id = await slack.only_debate_id()
    events = await slack.events(debate_id)
    (started,) = [e for e in events if isinstance(e, DebateStarted)]
    speaker = next(m.persona for m in started.cast if m.role == "proposition")

    opening = slack.opening()
    assert "thread_ts" not in opening
    shown = blocks_text(opening)
    assert "Should cities ban cars?" in shown
    for member in started.cast:
        assert member.persona.name in shown
    assert "If they tie, *you decide*: react ✅ Keep or ❌ Replace on the vote card within 30 s" in shown
    assert "🏁 Finished: all 2 rounds were played" in shown

    thread = slack.thread()
    assert all(m["thread_ts"] == opening["ts"] for m in thread)
    # two rounds with the vote between them: none follows the last round
    assert [m.get("username") for m in thread] == [
        speaker.name, "Vera Stone", None, speaker.name, "Vera Stone", None, "Sol Amari", None
    ]  # fmt: skip
    vote_card, closing_note, end_card = thread[2], thread[5], thread[7]
    assert vote_card["text"] == f"Vote: Should {speaker.name} keep the floor?"
    assert closing_note["text"].startswith("🏁 *Closing*")
    assert end_card["text"].startswith("The end")

    headings = {e.turn_id: e.heading for e in events if isinstance(e, TurnStarted)}
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    for message, turn in zip([thread[0], thread[1], thread[3], thread[4], thread[6]], turns, strict=True):
        persona = slack.rt.personas[turn.speaker.id]
        assert message["icon_url"] == persona.avatar_url
        assert message["text"] == f"_{headings[turn.turn_id]}_\n{turn.text}"  # as stored, once streamed

    card = blocks_text(vote_card)
    assert card.count("✅ Keep — Clear and direct.") == 4
    assert f"Result: {speaker.name} keeps the floor" in card
    assert slack.api.reactions[(CHANNEL, vote_card["ts"])] == {
        "white_check_mark": [BOT_USER],
        "x": [BOT_USER],
    }
    assert "Statistics" in blocks_text(end_card)
    assert "Summary" not in blocks_text(end_card)

    kinds = [type(e) for e in events]
    assert kinds.index(VotingStarted) < kinds.index(DebateCompleted)
    record = await slack.rt.store.get_debate(debate_id)
    assert record is not None
    assert record.status == "completed"
    assert (
        record.binding.platform,
        record.binding.scope,
        record.binding.channel,
        record.binding.started_by,
    ) == (
        "slack",
        TEAM,
        CHANNEL,
        ALICE,
    )
    stored = await slack.rt.store.binding_values(debate_id)
    assert stored["channel"] == CHANNEL
    assert stored["thread_ts"] == opening["ts"]
    assert stored["ts:vote:v1"] == vote_card["ts"]
    assert stored["ts:turn:t1"] == thread[0]["ts"]
    assert stored["ts:turn:t3"] == thread[3]["ts"]  # round 2 opens after the vote card
    assert stored["ts:turn:t5"] == thread[6]["ts"]


@pytest.mark.parametrize("problem", ["bad_signature", "stale_timestamp", "no_signature"])
async def test_a_forged_or_replayed_request_is_refused(slack: Harness, problem: str) -> None:
    body = json.dumps(envelope(mention_event("debate Should cities ban cars?")))
    headers = {
        "bad_signature": sign(body, secret="not-the-signing-secret"),
        "stale_timestamp": sign(body, ts=int(time.time()) - 600),
        "no_signature": {},
    }[problem]
    response = await slack.post(body, "application/json", headers=headers)
    assert response.status == 401
    await asyncio.sleep(0.1)
    assert slack.api.calls == []
    assert await slack.rt.store.list_debates() == []


async def test_without_streaming_whole_turns_arrive_split_at_sentences(
    tmp_path: Path, api: FakeSlack
) -> None:
    long_turn = " ".join(f"Point {i}: cars take space that people could use." for i in range(1, 13))
    script = {**SCRIPT, "proposition": [long_turn]}
    async with open_harness(
        tmp_path, api, script=script, slack={"streaming": False, "message_limit": 240}
    ) as slack:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        await slack.settle()
        thread = slack.thread()
        speaker = thread[0]["username"]
        vote_at = next(i for i, m in enumerate(thread) if m["text"].startswith("Vote: "))
        parts = [m for m in thread[:vote_at] if m.get("username") == speaker]  # the first turn
        assert len(parts) >= 3
        assert all(len(m["text"]) <= 240 for m in parts)
        assert all(m["text"].endswith(".") for m in parts)
        body = " ".join(m["text"] for m in parts).removeprefix("_Round 1 · for the motion_\n")
        assert body == long_turn
        persona_ts = {m["ts"] for m in thread if m.get("username")}
        assert not [c for c in api.calls_to("chat.update") if c.args["ts"] in persona_ts]
        stored = await slack.rt.store.binding_values(await slack.only_debate_id())
        assert stored["ts:turn:t1:1"] == parts[1]["ts"]
