"""Votes that reach a process which does not run the debate (several processes, one database).

Two runtimes share one SQLite file. The owner runs the debate and shows it in a Discord thread
through its own DiscordSink (the same bot token: Discord's REST is shared by both processes). The
other is the bot connected to the gateway (simcord): people's reactions and clicks reach it, it
finds the card through the store and hands the vote on; the owner's debate counts it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import discord
import pytest

from adapters.discord.ballots.reactions import CardRegistry
from adapters.discord.delivery.sink import DiscordSink
from adapters.discord.delivery.webhooks import PersonaWebhooks
from bot.runtime import Runtime
from core.clock import RealClock
from core.events import HumanVoteOpened, VoteCast, VotingClosed, VotingStarted
from core.ports import Binding
from core.session import DebateHandle
from core.spec import DebateSpec
from tests.adapters.discord.conftest import SCRIPT, World, buttons_of, card
from tests.adapters.discord.test_votes import TIE, _observers

FAST_VOTES: dict[str, Any] = {"poll_seconds": 0.05}
LATE_TIE = {**SCRIPT, "observer": _observers("keep", "replace", "keep", "replace", delay=4)}
SPEC = DebateSpec("arena", "Tabs or spaces?", {"exchanges_per_round": 1, "humans": "vote", "human_window": 6})
TIEBREAK = DebateSpec("arena", "Tabs or spaces?", {**SPEC.options, "humans": "tiebreak"})


async def eventually(check: Callable[[], Awaitable[bool]]) -> None:
    for _ in range(1000):  # 20 s at most
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


@asynccontextmanager
async def owner_debate(world: World, spec: DebateSpec = SPEC) -> AsyncIterator[tuple[Runtime, DebateHandle]]:
    """The debate, run by a second runtime on the same database, shown in a thread of the channel."""
    bot = world.bot
    assert bot.user is not None
    parent = bot.get_channel(world.channel.id)
    assert isinstance(parent, discord.TextChannel)
    thread = await parent.create_thread(name="Tabs or spaces?", type=discord.ChannelType.public_thread)
    async with Runtime(world.rt.config, clock=RealClock()) as owner:
        owner.enable_failover()  # applies the votes other processes leave in the store
        sink = DiscordSink(
            thread=thread,
            webhooks=PersonaWebhooks(owner.config.discord.webhook_name),
            owner_id=bot.user.id,
            settings=owner.config.discord,
            store=owner.store,
            cards=CardRegistry(),
            on_finished=lambda _: None,
        )
        binding = Binding(platform="discord", scope=str(world.guild.id), channel=str(thread.id))
        handle = await owner.start_debate(spec, sink, binding=binding, seed=3)
        sink.attach(handle)
        try:
            yield owner, handle
        finally:
            await sink.finish()


async def window_open(owner: Runtime, debate_id: str) -> VotingStarted:
    async def opened() -> bool:
        return any(isinstance(e, HumanVoteOpened) for e in await owner.store.events(debate_id))

    await eventually(opened)
    [started] = [e for e in await owner.store.events(debate_id) if isinstance(e, VotingStarted)]
    return started


def human_votes(events: list[Any]) -> list[tuple[str, str]]:
    return [(e.voter.id, e.choice) for e in events if isinstance(e, VoteCast) and e.voter.human]


@pytest.mark.slow
@pytest.mark.rostra(script=TIE, storage=FAST_VOTES)
async def test_a_reaction_reaching_the_other_process_counts_in_the_owners_debate(world: World) -> None:
    async with owner_debate(world) as (owner, handle):
        started = await window_open(owner, handle.debate_id)
        emoji = {o.key: o.emoji for o in started.options}
        assert world.rt.manager.get(handle.debate_id) is None  # the gateway's process does not run it
        ballot = card(world.thread(), "🗳️")
        await world.bob.react(ballot, emoji["keep"])
        await world.alice.react(ballot, emoji["keep"])
        await world.alice.react(ballot, emoji["replace"])  # her newer reaction replaces her vote
        await world.bob.unreact(ballot, emoji["keep"])  # and his is taken back
        await world.carol.react(ballot, emoji["replace"])
        await world.carol.react(ballot, emoji["keep"])
        await world.carol.unreact(ballot, emoji["keep"])  # her ❌ is still on the card: it counts again
        result = await asyncio.wait_for(handle.wait(), 30)
    events = await world.rt.store.events(handle.debate_id)  # the one database
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 2}
    assert closed.decision == "replace"
    alice, carol = str(world.alice.id), str(world.carol.id)
    assert sorted(set(human_votes(events))) == sorted(
        {(str(world.bob.id), "keep"), (alice, "keep"), (alice, "replace")}
        | {(carol, "replace"), (carol, "keep")}
    )
    assert result.stats.human_votes == 2
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # one log, the owner's


@pytest.mark.slow
@pytest.mark.rostra(script=LATE_TIE, storage=FAST_VOTES)
async def test_reactions_passed_on_before_the_window_opens_count_when_it_opens(world: World) -> None:
    """People decide only a tie: the card is up while the observers vote, and reactions made then
    through the gateway's process are kept by the owner's card ballot and count once the tie opens
    the window, as they would had they reached the owner."""
    async with owner_debate(world, TIEBREAK) as (owner, handle):

        async def card_up() -> bool:
            events = await owner.store.events(handle.debate_id)
            shown = any(
                m.embeds and (m.embeds[0].title or "").startswith("🗳️") for m in world.thread().history()
            )
            return shown and any(isinstance(e, VotingStarted) for e in events)

        await eventually(card_up)
        [started] = [e for e in await owner.store.events(handle.debate_id) if isinstance(e, VotingStarted)]
        emoji = {o.key: o.emoji for o in started.options}
        ballot = card(world.thread(), "🗳️")
        await world.bob.react(ballot, emoji["keep"])
        await world.alice.react(ballot, emoji["replace"])
        await world.alice.react(ballot, emoji["keep"])  # her newer reaction is her vote
        await world.carol.react(ballot, emoji["keep"])
        await world.carol.unreact(ballot, emoji["keep"])  # and hers is taken back
        events = await owner.store.events(handle.debate_id)
        assert not any(isinstance(e, HumanVoteOpened) for e in events)  # all before people may vote
        await asyncio.wait_for(handle.wait(), 30)
    events = await world.rt.store.events(handle.debate_id)
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 2, "replace": 0}
    assert sorted(human_votes(events)) == sorted([(str(world.bob.id), "keep"), (str(world.alice.id), "keep")])


@pytest.mark.slow
@pytest.mark.rostra(script=TIE, storage=FAST_VOTES, discord={"ballot": "buttons"})
async def test_a_click_reaching_the_other_process_counts_and_is_confirmed(world: World) -> None:
    async with owner_debate(world) as (owner, handle):
        await window_open(owner, handle.debate_id)

        async def has_buttons() -> bool:
            return bool(card(world.thread(), "🗳️").components)

        await eventually(has_buttons)
        ballot = card(world.thread(), "🗳️")
        clicked = await world.alice.click(ballot, label="Replace")
        assert clicked.ephemeral and clicked.response is not None
        assert clicked.response.content == "You voted ❌ Replace."
        result = await asyncio.wait_for(handle.wait(), 30)
    events = await world.rt.store.events(handle.debate_id)  # the one database
    assert human_votes(events) == [(str(world.alice.id), "replace")]  # stored once, by the owner
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 1}
    assert result.stats.human_votes == 1
    closed_card = card(world.thread(), "🗳️")  # the owner disabled the buttons at the close
    assert [c.disabled for c in buttons_of(closed_card)] == [True, True]


FAILOVER: dict[str, Any] = {"poll_seconds": 0.05, "lease_seconds": 1, "heartbeat_seconds": 0.2}


@pytest.mark.slow
@pytest.mark.rostra(script=TIE, storage=FAILOVER)
async def test_when_the_owner_stops_the_gateways_process_takes_the_debate_over(world: World) -> None:
    """The owner stops mid-window: the bot's own process takes the debate over in the same thread
    (its card is tracked and bound to the debate again), with the vote cast before kept.

    (A reaction made after the takeover is not sent here: simcord cannot settle around a debate
    that the runtime's background takeover started outside the bot's own tasks.)"""
    await world.bot.resuming  # type: ignore[misc]  # the bot looked for debates to resume at start
    world.rt.enable_failover()
    async with owner_debate(world) as (owner, handle):
        started = await window_open(owner, handle.debate_id)
        emoji = {o.key: o.emoji for o in started.options}
        ballot = card(world.thread(), "🗳️")
        await world.alice.react(ballot, emoji["replace"])  # reaches the bot, counted by the owner

        async def counted() -> bool:
            return len(handle.state.ballots[started.vote_id].human_votes) == 1

        await eventually(counted)
    # the owner stopped (its debate is left interrupted, its lease given up)

    async def taken_over() -> bool:
        taken = world.rt.manager.get(handle.debate_id)
        return taken is not None and taken.human_vote_open(started.vote_id)

    await eventually(taken_over)
    taken = world.rt.manager.get(handle.debate_id)
    assert taken is not None
    tracked = world.bot.desk.cards.get(ballot.id)  # the card is the bot's own again, bound to the
    assert tracked is not None and tracked.is_open  # debate: reactions on it now count here

    async def read_back() -> bool:  # the reactions on the card, read as the takeover binds it
        return {p: v.choice for p, v in tracked.recorded().items()} == {str(world.alice.id): "replace"}

    await eventually(read_back)
    result = await asyncio.wait_for(taken.wait(), 30)
    events = await world.rt.store.events(handle.debate_id)
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    assert closed.human_tally == {"keep": 0, "replace": 1}  # the vote cast before the stop is kept
    assert human_votes(events) == [(str(world.alice.id), "replace")]  # stored once
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert result.stats.human_votes == 1
