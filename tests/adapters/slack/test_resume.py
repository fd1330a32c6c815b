"""Rostra restarted mid-debate (the app rebuilt on the same database, against the same Slack): every
running debate goes on in its own thread, with the votes people made before, during and after the
restart, and nothing the channel saw is lost or posted twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.sender import PersonaIdentity, SlackSender
from adapters.slack.render.ops import Post, Upload
from core.events import (
    HumanVoteOpened,
    Notice,
    SpeakerSwitched,
    TurnCompleted,
    TurnStarted,
    VoteCast,
    VoteWithdrawn,
    VotingClosed,
)
from core.models import PersonaRef
from core.session import DebateHandle
from testkit.slack_api import BOT_USER, FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    ALICE,
    BOB,
    BOT_TOKEN,
    CAROL,
    CHANNEL,
    DAN,
    ERIN,
    SCRIPT,
    Harness,
    blocks_text,
    open_harness,
)

HOLD = 5.0
TIE: dict[str, Any] = {
    **SCRIPT,
    "observer": [
        {"vote": "keep", "reason": "Clear."},
        {"vote": "keep", "reason": "Steady."},
        {"vote": "replace", "reason": "Repetitive."},
        {"vote": "replace", "reason": "Too vague."},
    ],
}
RESUMED = "🔄 picked up again after a restart"


def tie_shown(slack: Harness, api: FakeSlack) -> bool:
    """The tie's window shows on its card, and so does its ballot (the two reactions)."""
    tie = any("It's a tie" in blocks_text(m) for m in slack.thread())
    return tie and len(api.calls_to("reactions.add")) >= 2


def people(handle: DebateHandle, vote_id: str = "v1") -> dict[str, str]:
    """The people's votes on record (a resumed debate rebuilds them as it catches up)."""
    ballot = handle.state.ballots.get(vote_id)
    return {voter: vote.choice for voter, vote in ballot.human_votes.items()} if ballot else {}


def edits_of(api: FakeSlack, ts: str) -> list[str]:
    return [blocks_text(c.args) for c in api.calls_to("chat.update") if c.args.get("ts") == ts]


def assert_nothing_posted_twice(api: FakeSlack) -> None:
    posts = [(m.get("username"), m["text"]) for m in api.posted]  # what reached the workspace
    assert len(posts) == len(set(posts)), [p for p in posts if posts.count(p) > 1]


async def test_a_restart_during_a_vote_keeps_every_vote_and_the_thread(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with open_harness(tmp_path, api, script=TIE, clock=HeldClock(hold=HOLD)) as before:
        await before.mention("debate Should cities ban cars?")
        handle = await before.wait_running()
        await api.wait_until(lambda: tie_shown(before, api))
        debate_id, opening = handle.debate_id, before.opening()
        card = api.calls_to("reactions.add")[0].args["timestamp"]
        await before.react(ALICE, "x", card)
        await before.react(BOB, "x", card)
        await before.react(ERIN, "white_check_mark", card)
        await api.wait_until(lambda: people(handle) == {ALICE: "replace", BOB: "replace", ERIN: "keep"})
        posts_before = len(api.calls_to("chat.postMessage"))
        edits_before = len(edits_of(api, card))
    # The bot is down: people keep reacting on the card, and Slack keeps what they do.
    api.react(CHANNEL, card, "x", CAROL)
    api.react(CHANNEL, card, "white_check_mark", ERIN, added=False)
    assert await _status(tmp_path, api, debate_id) == "interrupted"

    clock = HeldClock(hold=HOLD)
    async with open_harness(tmp_path, api, script=TIE, clock=clock) as after:
        [resumed] = await after.app.resume_debates()
        assert resumed.debate_id == debate_id
        # The window opens again: what is on the card now counts (Carol's, not Erin's any more).
        await api.wait_until(lambda: people(resumed) == {ALICE: "replace", BOB: "replace", CAROL: "replace"})
        await after.react(DAN, "white_check_mark", card)  # and a reaction made now counts too
        await api.wait_until(lambda: len(people(resumed)) == 4)
        await clock.release()
        await after.settle()
        events = await after.events(debate_id)
        record_after = await after.rt.store.get_debate(debate_id)

    assert record_after is not None and record_after.status == "completed"
    closed = next(e for e in events if isinstance(e, VotingClosed))
    assert closed.tally == {"keep": 2, "replace": 2}
    assert closed.human_tally == {"keep": 1, "replace": 3}
    assert (closed.decision, closed.tie_broken_by) == ("replace", "humans")
    reopened = [e for e in events if isinstance(e, HumanVoteOpened)]
    assert len(reopened) == 2  # the window, then the same window reopened after the restart
    assert [e.voter.id for e in events if isinstance(e, VoteWithdrawn)] == [ERIN]
    humans = [e.voter.id for e in events if isinstance(e, VoteCast) and e.voter.human]
    assert sorted(humans) == sorted([ALICE, BOB, ERIN, CAROL, DAN])  # each counted once

    # One thread, one opening card, one vote card (edited, never posted again), in order.
    assert [m["ts"] for m in api.top_level(CHANNEL)] == [opening["ts"]]
    thread = api.thread(CHANNEL, opening["ts"])
    cards = [m for m in thread if m["text"].startswith("Vote: ")]
    assert [m["ts"] for m in cards] == [card]
    shown = blocks_text(api.messages[(CHANNEL, card)])
    assert "People: ✅ Keep 1 · ❌ Replace 3" in shown
    assert "is replaced" in shown
    assert sorted(api.reactions[(CHANNEL, card)]["x"]) == sorted([BOT_USER, ALICE, BOB, CAROL])
    assert [c.args["timestamp"] for c in api.calls_to("reactions.add")] == [card, card]  # ✅ ❌ once
    reopened_card = [v for v in edits_of(api, card)[edits_before:] if "*It's a tie: people decide!*" in v]
    assert reopened_card  # the same card, its window open again
    switch = next(e for e in events if isinstance(e, SpeakerSwitched))
    texts = [m["text"] for m in thread]
    assert sum("steps down" in t for t in texts) == 1
    assert f"*{switch.new.name}* takes the floor" in next(t for t in texts if "steps down" in t)
    assert texts[-1].startswith("The end")
    assert thread.index(cards[0]) < texts.index(next(t for t in texts if "steps down" in t)) < len(texts) - 1
    assert len(api.calls_to("chat.postMessage")) > posts_before
    assert any(RESUMED in v for v in edits_of(api, opening["ts"]))
    assert "🏁 Finished" in blocks_text(api.messages[(CHANNEL, opening["ts"])])
    assert_nothing_posted_twice(api)


LONG_TURN = (
    "Cities should ban cars from their centres, because streets are for people and not for parking,"
    " and every city that tried it saw more people walking, more shops open and fewer crashes."
)


async def test_a_restart_mid_turn_replaces_the_partial_message(tmp_path: Path, api: FakeSlack) -> None:
    script = {**SCRIPT, "proposition": [LONG_TURN]}
    clock = HeldClock(hold=4.0)  # every streamed chunk (5 s each) waits for the test
    streaming = {"streaming": True}
    async with open_harness(
        tmp_path, api, script=script, clock=clock, latency=5.0, slack=streaming
    ) as before:
        await before.mention("debate Should cities ban cars?")
        handle = await before.wait_running()
        for _ in range(4):  # a few chunks of the first turn stream in, then the bot stops
            await clock.release()
        await api.wait_until(lambda: any(" …" in m["text"] for m in before.thread()))
        debate_id = handle.debate_id
        (partial,) = before.thread()
        assert partial["text"].endswith(" …") and "Cities should ban cars" in partial["text"]
        stored = await before.rt.store.binding_values(debate_id)
        assert stored["ts:turn:t1"] == partial["ts"]

    async with open_harness(tmp_path, api, script=script, slack=streaming) as after:
        [resumed] = await after.app.resume_debates()
        await after.settle()
        events = await after.events(debate_id)
        thread = after.thread()

    restarts = [e for e in events if isinstance(e, TurnStarted) and e.turn_id == "t1"]
    assert [e.attempt for e in restarts] == [1, 2]
    first = next(e for e in events if isinstance(e, TurnCompleted) and e.turn_id == "t1")
    assert first.text == LONG_TURN
    speaker = first.speaker
    [posted] = [m for m in api.posted if m["ts"] == partial["ts"]]
    assert posted["username"] == speaker.name  # as posted; Slack drops the name on an edit
    mine = [m for m in thread if "Round 1 · for the motion" in m["text"]]
    assert [m["ts"] for m in mine] == [partial["ts"]]  # the same message, completed in place
    assert mine[0]["text"] == f"_Round 1 · for the motion_\n{LONG_TURN}"
    assert any("tries again" in v for v in edits_of(api, partial["ts"]))
    assert thread[-1]["text"].startswith("The end")
    assert resumed.done
    assert_nothing_posted_twice(api)


async def test_what_the_thread_never_got_before_the_restart_is_delivered_once(
    tmp_path: Path, api: FakeSlack
) -> None:
    """Slack stalls on a post; the debate runs ahead (stored, not shown) and the bot stops. After the
    restart the thread gets what it missed, in order, then the debate goes on."""
    stalled = api.hold_next("chat.postMessage", when=lambda args: args.get("username") == "Vera Stone")
    async with open_harness(tmp_path, api, script=TIE, clock=HeldClock(hold=HOLD)) as before:
        await before.mention("debate Should cities ban cars?")
        handle = await before.wait_running()
        await api.wait_until(lambda: stalled.held and "v1" in handle.state.ballots)
        debate_id = handle.debate_id
        assert [m.get("username") for m in before.thread()] == [handle.state.turns[0].speaker.name]
        waiting = await before.events(debate_id)  # people cannot see the card: the window's clock waits
        assert not any(isinstance(e, VotingClosed) for e in waiting)
    assert not stalled.gate.is_set()  # that post never reached Slack

    clock = HeldClock(hold=HOLD)
    async with open_harness(tmp_path, api, script=TIE, clock=clock) as after:
        [resumed] = await after.app.resume_debates()
        await api.wait_until(lambda: tie_shown(after, api))
        card = next(m["ts"] for m in after.thread() if m["text"].startswith("Vote: "))
        await after.react(ALICE, "white_check_mark", card)
        await api.wait_until(lambda: people(resumed) == {ALICE: "keep"})
        await clock.release()
        await after.settle()
        events = await after.events(debate_id)
        thread = after.thread()

    names = [m.get("username") for m in thread]
    speaker = handle.state.turns[0].speaker.name
    assert names[:3] == [speaker, "Vera Stone", None]  # the missed turn, then the vote card
    assert thread[2]["text"].startswith("Vote: ")
    card_text = blocks_text(thread[2])
    assert card_text.count("✅ Keep — ") == 2 and card_text.count("❌ Replace — ") == 2  # AI votes caught up
    assert [c.args["name"] for c in api.calls_to("reactions.add")] == ["white_check_mark", "x"]
    closed = next(e for e in events if isinstance(e, VotingClosed))
    assert closed.human_tally == {"keep": 1, "replace": 0}
    assert thread[-1]["text"].startswith("The end")
    assert names.count("Vera Stone") == 2  # her turns in rounds 1 and 2, each shown once
    assert_nothing_posted_twice(api)


async def test_a_stop_between_a_post_and_its_bookkeeping_posts_nothing_again(
    tmp_path: Path, api: FakeSlack
) -> None:
    """If the bot dies after Slack took a message but before it noted the thread had seen that
    event, the event is shown again after the restart: as an edit of the same message."""
    async with open_harness(tmp_path, api, script=TIE, clock=HeldClock(hold=HOLD)) as before:
        await before.mention("debate Should cities ban cars?")
        handle = await before.wait_running()
        await api.wait_until(lambda: tie_shown(before, api))
        debate_id, opening = handle.debate_id, before.opening()
        card = api.calls_to("reactions.add")[0].args["timestamp"]
        await before.react(ALICE, "x", card)
        await api.wait_until(lambda: people(handle) == {ALICE: "replace"})
        shown_before = [(m["ts"], m.get("username")) for m in before.thread()]

    clock = HeldClock(hold=HOLD)
    async with open_harness(tmp_path, api, script=TIE, clock=clock) as after:
        await after.rt.store.set_binding_value(debate_id, "delivered", "1")  # as if noted nothing since
        [resumed] = await after.app.resume_debates()
        await api.wait_until(lambda: people(resumed) == {ALICE: "replace"} and clock.waiting == 1)
        await clock.release()
        await after.settle()

    thread = api.thread(CHANNEL, opening["ts"])
    assert [(m["ts"], m.get("username")) for m in thread][: len(shown_before)] == shown_before
    assert [m["ts"] for m in thread if m["text"].startswith("Vote: ")] == [card]
    assert thread[-1]["text"].startswith("The end")
    assert [m["ts"] for m in api.top_level(CHANNEL)] == [opening["ts"]]
    assert_nothing_posted_twice(api)


async def test_a_debate_whose_channel_is_gone_is_closed_with_the_reason(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with open_harness(tmp_path, api, script=TIE, clock=HeldClock(hold=HOLD)) as before:
        await before.mention("debate Should cities ban cars?")
        handle = await before.wait_running()
        await api.wait_until(lambda: handle.human_vote_open("v1"))
        debate_id = handle.debate_id
    api.fail_next("reactions.get", status=200, error="channel_not_found")
    posts = len(api.calls_to("chat.postMessage"))
    async with open_harness(tmp_path, api, script=TIE) as after:
        assert await after.app.resume_debates() == []
        await after.settle()
        record = await after.rt.store.get_debate(debate_id)
        events = await after.events(debate_id)
    assert record is not None and record.status == "failed"
    assert "the channel it ran in is gone" in record.reason
    assert any(isinstance(e, Notice) and "gone" in e.message for e in events)
    assert len(api.calls_to("chat.postMessage")) == posts


async def test_with_resume_off_the_thread_is_told_and_closed(tmp_path: Path, api: FakeSlack) -> None:
    async with open_harness(tmp_path, api, script=TIE, clock=HeldClock(hold=HOLD)) as before:
        await before.mention("debate Should cities ban cars?")
        handle = await before.wait_running()
        await api.wait_until(lambda: tie_shown(before, api))
        debate_id, opening = handle.debate_id, before.opening()
    async with open_harness(tmp_path, api, script=TIE, resume=False) as after:
        assert await after.app.resume_debates() == []
        await after.settle()
        record = await after.rt.store.get_debate(debate_id)
    assert record is not None and record.status == "interrupted"
    thread = api.thread(CHANNEL, opening["ts"])
    assert thread[-2]["text"].startswith("⚠️ Rostra restarted and resuming is off here")
    assert thread[-1]["text"].startswith("The end")
    card = next(m for m in thread if m["text"].startswith("Vote: "))
    assert "Vote cancelled: the debate ended" in blocks_text(card)
    assert "🏁 Finished" in blocks_text(api.messages[(CHANNEL, opening["ts"])])
    assert_nothing_posted_twice(api)


async def _status(tmp_path: Path, api: FakeSlack, debate_id: str) -> str | None:
    async with open_harness(tmp_path, api) as peek:
        record = await peek.rt.store.get_debate(debate_id)
    return record.status if record is not None else None


async def test_a_restored_sender_uploads_no_file_twice_and_keeps_bold_names(api: FakeSlack) -> None:
    """Details a restart must not forget: files already attached, and that Slack refused persona
    names in this workspace (the thread was told once; it is not told again)."""
    api.refuse_custom_names = True
    client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url)
    opening = (await client.chat_postMessage(channel=CHANNEL, text="Debate"))["ts"]
    note = (await client.chat_postMessage(channel=CHANNEL, thread_ts=opening, text="note"))["ts"]
    remembered: dict[str, str] = {}

    async def remember(key: str, value: str) -> None:
        remembered[key] = value

    async def ours() -> bool:
        return True

    sender = SlackSender(
        client,
        channel=CHANNEL,
        thread_ts=opening,
        identity=PersonaIdentity(),
        limit=3000,
        remember=remember,
        fence=ours,
    )
    sender.restore({"ts:note:custom-names": note, "file:panel-1.md": "sent", "ts:turn:t1": ""})
    assert "turn:t1" not in sender.ts_of  # a message deleted before the restart stays forgotten
    await sender.apply(Upload(filename="panel-1.md", content="# Q&A\n", title="panel-1.md"))
    assert api.files == {}
    ada = PersonaRef(id="ada", name="Ada Quill", emoji="🧮")
    await sender.apply(Post("turn:t2", "Hello.", persona=ada))
    posted = api.posted[-1]
    assert posted["text"] == "*🧮 Ada Quill*\nHello."
    assert "username" not in posted
    assert not [c for c in api.calls_to("chat.postMessage") if "username" in c.args]  # not even tried
    assert not any("Persona names are shown in bold" in m["text"] for m in api.posted)
    assert remembered == {"ts:turn:t2": posted["ts"]}
