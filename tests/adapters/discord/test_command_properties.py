"""Property: `/debate start` starts a debate with a cleaned topic or refuses in one line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from adapters.discord.launch import StartRequest
from tests.adapters.discord.conftest import World
from tests.adapters.discord.test_admission_race import _interaction
from tests.properties import RUNS, TOPICS, _clean, _one_line

# --- Discord ---------------------------------------------------------------------------------------


async def test_the_discord_command_starts_a_clean_topic_or_refuses_in_one_line(world: World) -> None:
    interaction = await _interaction(world, world.alice, world.channel)
    launcher = world.bot.debate_commands.launcher
    limit = world.rt.core.limits.max_topic_length

    @RUNS
    @given(
        topic=TOPICS,
        fmt=st.one_of(
            st.none(), st.sampled_from(["arena", "oxford", "council", "panel"]), st.text(max_size=10)
        ),
        duration=st.one_of(st.none(), st.integers(min_value=30, max_value=7200)),
        exchanges=st.one_of(st.none(), st.integers(min_value=1, max_value=10)),
        humans=st.one_of(st.none(), st.sampled_from(["off", "tiebreak", "vote"])),
    )
    def check(
        topic: str, fmt: str | None, duration: int | None, exchanges: int | None, humans: str | None
    ) -> None:
        request = StartRequest(
            topic[:limit], fmt, duration, exchanges, humans
        )  # the client bounds its length
        plan = launcher._plan(interaction, request)  # type: ignore[arg-type]
        if isinstance(plan, str):
            _one_line(plan)
            return
        assert plan.spec is not None
        _clean(plan.spec.topic, limit)

    check()
