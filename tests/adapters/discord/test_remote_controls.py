"""`/debate status` and `/debate stop` through a process that does not run the debate (two runtimes,
one database): the status comes from the stored log, and the stop is left in the store for the owner,
which ends the debate; the answer says what happened."""

from __future__ import annotations

import discord
import pytest

from adapters.discord.ballots.reactions import CardRegistry
from adapters.discord.delivery.sink import DiscordSink
from adapters.discord.delivery.webhooks import PersonaWebhooks
from bot.runtime import Runtime
from core.clock import RealClock
from core.events import DebateCompleted
from core.ports import Binding
from tests.adapters.discord.conftest import World
from tests.adapters.discord.test_remote_votes import FAST_VOTES, SPEC, eventually


@pytest.mark.rostra(storage=FAST_VOTES)
async def test_status_and_stop_work_from_the_process_that_does_not_run_the_debate(world: World) -> None:
    bot = world.bot
    assert bot.user is not None
    parent = bot.get_channel(world.channel.id)
    assert isinstance(parent, discord.TextChannel)
    thread = await parent.create_thread(name="Tabs or spaces?", type=discord.ChannelType.public_thread)
    async with Runtime(world.rt.config, clock=RealClock()) as owner:
        owner.enable_failover()  # applies what other processes leave in the store (votes, stops)
        sink = DiscordSink(
            thread=thread,
            webhooks=PersonaWebhooks(owner.config.discord.webhook_name),
            owner_id=bot.user.id,
            settings=owner.config.discord,
            store=owner.store,
            cards=CardRegistry(),
            on_finished=lambda _: None,
        )
        binding = Binding(
            platform="discord",
            scope=str(world.guild.id),
            channel=str(thread.id),
            started_by=str(world.alice.id),
        )
        handle = await owner.start_debate(SPEC, sink, binding=binding, seed=3)
        sink.attach(handle)
        try:
            assert world.rt.manager.get(handle.debate_id) is None  # the gateway's process does not run it
            here = world.thread()

            status = await world.bob.slash(here, "debate status")
            assert status.ephemeral and status.response is not None
            assert "Tabs or spaces?" in status.response.content
            assert f"`{handle.debate_id}`" in status.response.content

            stopped = await world.alice.slash(here, "debate stop")
            assert stopped.ephemeral and stopped.response is not None
            assert stopped.response.content in (
                f"Stopping the debate; its closing card follows in <#{thread.id}>.",
                "Asked the debate to stop; it ends within moments, and its closing card follows in"
                f" <#{thread.id}>.",
            )

            async def ended() -> bool:
                return handle.done

            await eventually(ended)
            last = (await owner.store.events(handle.debate_id))[-1]
            assert isinstance(last, DebateCompleted) and last.reason.startswith("stopped")

            after = await world.bob.slash(here, "debate status")
            assert after.response is not None
            assert after.response.content == "No debate is running here. Start one with `/debate start`."
        finally:
            await sink.finish()
