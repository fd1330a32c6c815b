"""Restarts: a debate cut short by a restart carries on in its thread, with its votes and messages.

A restart is simcord's `restart_bot`: the old bot generation's tasks are cancelled (the running
debate is left interrupted in the store, as on a clean stop) and a new bot connects. Either with the
same runtime, or, as after a process restart, with a fresh runtime over the same SQLite file. What
the thread shows is checked message by message: nothing lost, nothing posted twice.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import discord
import pytest

from adapters.discord import create_bot
from adapters.discord.delivery.webhooks import SEAT_SHARE
from bot.runtime import Runtime
from core.clock import RealClock
from core.events import DebateCompleted, HumanVoteOpened, Notice, TurnCompleted, TurnStarted, VotingClosed
from tests.adapters.discord.conftest import SCRIPT, TOPIC, World, card, label, shown

TIE = {
    **SCRIPT,
    "observer": [{"vote": v, "reason": f"I say {v}."} for v in ("keep", "replace", "keep", "replace")],
}


async def _restart(world: World, rt: Runtime | None = None) -> None:
    """A new bot (on `rt`, else the same runtime) that has finished resuming."""
    await world.env.restart_bot(create_bot(rt or world.rt))
    resuming = world.bot.resuming
    assert resuming is not None
    await resuming
    await world.env.settle()


async def _fresh_runtime(world: World) -> Runtime:
    """What a process restart gives: a new runtime over the same database file."""
    return await Runtime(world.rt.config, clock=RealClock()).__aenter__()


def _once_each(world: World, messages: list[discord.Message], turns: list[TurnCompleted]) -> None:
    """No card, notice or turn was posted twice; every turn was posted once and then edited."""
    posted = Counter((m.embeds[0].title if m.embeds else m.content) for m in messages if m.webhook_id is None)
    assert all(n == 1 for n in posted.values()), posted
    assert [m.author.name for m in messages if m.webhook_id] == [t.speaker.name for t in turns]
    assert len(world.persona_requests()) == len(turns)


def _closed(events: list[Any]) -> VotingClosed:
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    return closed


async def _events_of(world: World) -> list[Any]:
    rt = await _fresh_runtime(world)
    try:
        return await rt.store.events((await rt.store.list_debates(1))[0].id)
    finally:
        await rt.aclose()


def _closed_or_none(events: list[Any]) -> VotingClosed | None:
    return next((e for e in events if isinstance(e, VotingClosed)), None)


@pytest.mark.rostra(script=TIE)
async def test_a_restart_during_a_vote_keeps_votes_made_before_and_after(world: World) -> None:
    await world.start()
    thread = world.thread()
    ballot = card(thread, "🗳️")
    assert "**It's a tie: people decide!**" in (ballot.embeds[0].description or "")
    await world.alice.react(ballot, "❌")
    before = [m.id for m in shown(world)]

    await _restart(world)

    assert [t.id for t in world.channel.threads] == [thread.id]
    assert [m.id for m in shown(world)] == before  # nothing posted again
    reopened = [e for e in await world.events() if isinstance(e, HumanVoteOpened)]
    assert len(reopened) == 2 and reopened[-1].window <= reopened[0].window
    text = card(thread, "🗳️").embeds[0].description or ""
    ends = int(reopened[-1].at.timestamp() + reopened[-1].window)
    assert f"voting closes <t:{ends}:R>" in text  # the card shows the new closing time
    assert "People so far: ✅ Keep 0 · ❌ Replace 1" in text  # alice's vote from before the restart

    await world.bob.react(ballot, "❌")
    await world.carol.react(ballot, "✅")
    assert "People so far: ✅ Keep 1 · ❌ Replace 2" in (card(thread, "🗳️").embeds[0].description or "")
    await world.env.advance_time(30)

    events = await world.events()
    closed = _closed(events)
    assert closed.human_tally == {"keep": 1, "replace": 2}
    assert (closed.decision, closed.tie_broken_by) == ("replace", "humans")
    assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "max_rounds"
    record = await world.latest()
    assert record.status == "completed"
    messages = shown(world)
    assert [label(m) for m in messages][-1] == f"🏁 Debate over: {TOPIC}"
    _once_each(world, messages, [e for e in events if isinstance(e, TurnCompleted)])
    assert world.channel.threads[0].id == thread.id


@pytest.mark.rostra(script=TIE)
async def test_after_a_process_restart_reactions_made_while_it_was_down_count(world: World) -> None:
    await world.start()
    thread = world.thread()
    ballot = card(thread, "🗳️")
    await world.alice.react(ballot, "❌")
    await world.bob.react(ballot, "✅")
    await world.rt.aclose()  # the process stops: the debate is interrupted, nobody counts reactions

    await world.carol.react(ballot, "❌")  # while Rostra is down
    await world.bob.unreact(ballot, "✅")  # bob takes his vote back while it is down
    thread_now = world.bot.get_channel(thread.id)
    assert isinstance(thread_now, discord.Thread)
    await thread_now.edit(archived=True)  # and the thread archived itself
    assert _closed_or_none(await _events_of(world)) is None
    rt = await _fresh_runtime(world)
    try:
        await _restart(world, rt)
        reopened = await world.bot.fetch_channel(thread.id)
        assert isinstance(reopened, discord.Thread) and not reopened.archived
        assert "People so far: ✅ Keep 0 · ❌ Replace 2" in (card(thread, "🗳️").embeds[0].description or "")
        await world.env.advance_time(30)

        events = await rt.store.events((await rt.store.list_debates(1))[0].id)
    finally:
        await rt.aclose()
    closed = _closed(events)
    assert closed.human_tally == {"keep": 0, "replace": 2}
    assert [e.voter.name for e in events if e.kind == "vote_withdrawn"] == ["bob"]
    assert isinstance(events[-1], DebateCompleted)
    _once_each(world, shown(world), [e for e in events if isinstance(e, TurnCompleted)])


# every three words take 5 s (longer than simcord's settle window, so the stream waits for the test)
@pytest.mark.simcord(settle_timeout=2)
@pytest.mark.rostra(model={"latency": 5})
@pytest.mark.parametrize("fresh", [False, True], ids=["same runtime", "fresh runtime"])
async def test_a_restart_mid_turn_completes_the_partial_message_without_a_second_one(
    world: World, fresh: bool
) -> None:
    await world.start(humans="off")
    await world.env.advance_time(10)  # the first words of the opening turn are in the thread
    [partial] = [m for m in world.channel.history() if m.webhook_id is not None]
    assert partial.content.endswith(" ▌") and partial.content != "-# Round 1 · for the motion ▌"

    rt = world.rt
    if fresh:
        await world.rt.aclose()
        rt = await _fresh_runtime(world)
    try:
        await _restart(world, rt)
        restarted = [m for m in world.channel.history() if m.webhook_id is not None]
        assert [m.id for m in restarted] == [partial.id]
        assert restarted[0].content == "-# Round 1 · for the motion\n↻ *starting over…* ▌"
        await world.env.advance_time(600)
        events = await rt.store.events((await rt.store.list_debates(1))[0].id)
    finally:
        if fresh:
            await rt.aclose()

    assert isinstance(events[-1], DebateCompleted)
    assert [e.attempt for e in events if isinstance(e, TurnStarted) and e.turn_id == "t1"] == [1, 2]
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    spoken = [m for m in world.channel.history() if m.webhook_id is not None]
    assert spoken[0].id == partial.id
    assert spoken[0].content == f"-# Round 1 · for the motion\n{SCRIPT['proposition'][0]}"
    assert not any("▌" in m.content for m in spoken)
    _once_each(world, shown(world), turns)


@pytest.mark.simcord(settle_timeout=2)
@pytest.mark.rostra(model={"latency": 5})
async def test_a_debate_on_the_channels_second_webhook_gets_it_back_after_a_restart(world: World) -> None:
    """Four debates fill the channel's first persona webhook, so this one speaks through the second;
    only that webhook can finish its half-written message after the restart."""
    for _ in range(SEAT_SHARE):
        world.bot.webhooks.seat(world.channel.id)
    await world.start(humans="off")
    await world.env.advance_time(10)
    [partial] = [m for m in world.channel.history() if m.webhook_id is not None]
    second = partial.webhook_id

    await _restart(world)  # a new bot: no seats taken, its first free webhook would be the first
    await world.env.advance_time(600)

    spoken = [m for m in world.channel.history() if m.webhook_id is not None]
    assert spoken[0].id == partial.id and not any("▌" in m.content for m in spoken)
    assert {m.webhook_id for m in spoken} == {second}
    events = await world.events()
    assert isinstance(events[-1], DebateCompleted)
    _once_each(world, shown(world), [e for e in events if isinstance(e, TurnCompleted)])


@pytest.mark.rostra(script=TIE, resume=False)
async def test_with_resume_off_the_thread_is_told_and_the_debate_closes(world: World) -> None:
    await world.start()
    thread = world.thread()

    await _restart(world)

    events = await world.events()
    [notice] = [e for e in events if isinstance(e, Notice)]
    assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "interrupted"
    messages = shown(world)
    assert [label(m) for m in messages][-2:] == ["⚠️", f"🏁 Debate over: {TOPIC}"]
    assert messages[-2].content == f"⚠️ {notice.message}"
    vote = card(thread, "🗳️").embeds[0].description or ""
    assert "**Result: Vote cancelled: the debate ended**" in vote and "voting closes" not in vote
    status = await world.bob.slash(thread, "debate status")  # nothing runs there any more
    assert status.response is not None
    assert status.response.content.startswith("No debate is running"), status.response.content
    _once_each(world, messages, [e for e in events if isinstance(e, TurnCompleted)])


@pytest.mark.rostra(script=TIE)
async def test_a_debate_whose_thread_was_deleted_while_down_is_closed(world: World) -> None:
    await world.start()
    thread = world.bot.get_channel(world.thread().id)
    assert isinstance(thread, discord.Thread)
    await world.rt.aclose()
    await thread.delete()

    rt = await _fresh_runtime(world)
    try:
        await _restart(world, rt)
        [record] = await rt.store.list_debates(1)
    finally:
        await rt.aclose()
    assert record.status == "failed"
    assert "the channel it ran in is gone" in record.reason


@pytest.mark.rostra(script=TIE)
async def test_events_stored_but_never_shown_before_a_kill_are_shown_once(world: World) -> None:
    await world.start()
    thread = world.bot.get_channel(world.thread().id)
    assert isinstance(thread, discord.Thread)
    lost = card(world.thread(), "🗳️")
    await world.rt.aclose()
    rt = await _fresh_runtime(world)
    try:
        # a kill took the vote card with it: stored, never delivered (what the queue held is gone)
        [record] = await rt.store.list_debates(1)
        events = await rt.store.events(record.id)
        [started] = [e for e in events if e.kind == "voting_started"]
        await rt.store.set_binding_value(record.id, "discord.delivered", str(started.seq - 1))
        await rt.store.set_binding_value(record.id, "discord.slot.vote:v1", "")
        await thread.get_partial_message(lost.id).delete()

        await _restart(world, rt)
        ballot = card(world.thread(), "🗳️")
        assert ballot.id != lost.id
        assert {str(r.emoji): r.count for r in ballot.reactions} == {"✅": 1, "❌": 1}
        assert "**It's a tie: people decide!**" in (ballot.embeds[0].description or "")
        await world.alice.react(ballot, "❌")
        await world.env.advance_time(30)
        events = await rt.store.events(record.id)
    finally:
        await rt.aclose()
    assert _closed(events).human_tally == {"keep": 0, "replace": 1}
    assert isinstance(events[-1], DebateCompleted)
    _once_each(world, shown(world), [e for e in events if isinstance(e, TurnCompleted)])


@pytest.mark.rostra(script=TIE)
async def test_commands_reach_a_resumed_debate(world: World) -> None:
    await world.start()
    thread = world.thread()
    await _restart(world)

    status = await world.bob.slash(thread, "debate status")
    busy = await world.bob.slash(world.channel, "debate start", topic="Another one")
    stop = await world.alice.slash(world.channel, "debate stop")

    assert status.response is not None and status.response.content.startswith(f"**{TOPIC}** (arena")
    assert busy.ephemeral and busy.response is not None
    assert busy.response.content.startswith("A debate is already running in this channel")
    assert stop.response is not None and stop.response.content.startswith("Stopping the debate")
    events = await world.events()
    assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "stopped"
    closing = card(thread, "🏁").embeds[0].description or ""
    assert closing.startswith("**Ended:** stopped by alice")


LONG_TURN = " ".join(["Streets-belong-to-people-and-not-to-parking-lots."] * 60)


@pytest.mark.simcord(settle_timeout=2)
@pytest.mark.rostra(
    script={**SCRIPT, "proposition": [LONG_TURN]}, model={"latency": 5, "max_tokens": {"turn": 4000}}
)
async def test_a_partial_turn_over_two_messages_starts_over_in_the_first(world: World) -> None:
    await world.start(humans="off")
    await world.env.advance_time(5 * 16)  # 48 words: more than one message
    partial = [m for m in world.channel.history() if m.webhook_id is not None]
    assert len(partial) == 2

    await _restart(world)

    restarted = [m for m in world.channel.history() if m.webhook_id is not None]
    assert [m.id for m in restarted] == [partial[0].id]  # the surplus message is gone
    deleted = [r for r in world.env.http_requests if r.method == "DELETE"]
    assert [r.path.rsplit("/", 1)[-1] for r in deleted] == [str(partial[1].id)]
    assert deleted[0].path.startswith(f"/webhooks/{partial[1].webhook_id}/")  # as the webhook
    await world.env.advance_time(900)

    events = await world.events()
    assert isinstance(events[-1], DebateCompleted)
    spoken = [m for m in world.channel.history() if m.webhook_id is not None]
    assert spoken[0].id == partial[0].id
    first = [m.content for m in spoken[:2]]
    assert "\n".join(first).removeprefix("-# Round 1 · for the motion\n").replace("\n", " ") == LONG_TURN
    assert not any("▌" in m.content for m in spoken)
