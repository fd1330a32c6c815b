"""Refusals are ephemeral and start nothing; stop, status, transcript and personas do what they say."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from html import escape as html_escape
from typing import Any

import discord
import pytest
from simcord import InteractionResult
from simcord.backend.errors import OptionError

from core.events import DebateCompleted, VotingClosed
from tests.adapters.discord.conftest import SCRIPT, TOPIC, World, card, cards

# people vote alongside the observers: the debate waits in a 30 s window until the test moves time
PAUSED: dict[str, Any] = {"humans": "vote"}


def _refused(result: InteractionResult, text: str) -> None:
    assert result.ephemeral
    assert result.response is not None and result.response.content == text


async def _nothing_started(world: World, debates_before: int = 0) -> None:
    assert len(await world.rt.store.list_debates(50)) == debates_before


@pytest.mark.parametrize(
    ("options", "text"),
    [
        ({"topic": "   "}, 'The topic is empty: give the motion to debate, e.g. "Should cities ban cars?"'),
        (
            {"format": "oxford", "duration": 60},
            "An oxford debate doesn't take `duration` (arena takes it). It takes `humans`.",
        ),
        (
            {"format": "panel", "humans": "vote"},
            "A panel debate doesn't take `humans` (arena, council, oxford take it)."
            " It takes `document1–3`, `question_document`.",
        ),
        (
            {"document1": ("notes.md", b"# Notes"), "exchanges": 2, "format": "council"},
            "A council debate doesn't take `exchanges` and `document1–3` (arena, panel take them)."
            " It takes `humans`.",
        ),
        ({"format": "council", "humans": "vote"}, "humans must be one of 'off' or 'tiebreak' (got 'vote')"),
    ],
)
async def test_bad_input_is_refused_privately(world: World, options: dict[str, Any], text: str) -> None:
    result = await world.start(**options)

    _refused(result, text)
    assert world.channel.threads == []
    await _nothing_started(world)


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"topic": "x" * 301}, "'topic' of 'debate start' must be at most 300 characters"),
        ({"duration": 5}, "'duration' of 'debate start' must be ≥ 30"),
        ({"duration": 99999}, "'duration' of 'debate start' must be ≤ 7200"),
        ({"exchanges": 0}, "'exchanges' of 'debate start' must be ≥ 1"),
        ({"exchanges": 11}, "'exchanges' of 'debate start' must be ≤ 10"),
    ],
)
async def test_the_command_declares_its_limits_so_the_client_enforces_them(
    world: World, options: dict[str, Any], complaint: str
) -> None:
    with pytest.raises(OptionError, match=complaint):
        await world.start(**options)
    assert world.channel.threads == []
    await _nothing_started(world)


@pytest.mark.rostra(limits={"user_cooldown": 0})  # the store counts cooldowns in wall time
async def test_transcript_ids_autocomplete_to_the_debates_one_can_see(world: World) -> None:
    hidden = world.guild.create_text_channel(
        "staff",
        overwrites={
            world.guild.default_role: discord.PermissionOverwrite(view_channel=False),
            world.alice: discord.PermissionOverwrite(view_channel=True),
            world.me: discord.PermissionOverwrite(view_channel=True),
        },
    )
    await world.start(topic="Should cities ban cars?")
    seen = await world.latest()
    await world.env.advance_time(60)
    await world.start(channel=hidden, topic="Staff pay next year?")
    secret = await world.latest()

    commands = world.bot.debate_commands
    for member, expected in ((world.bob, [seen.id]), (world.alice, [secret.id, seen.id])):
        interaction = await _autocomplete_ask(world, member)
        choices = await commands.transcript_choices(interaction, "")  # type: ignore[arg-type]
        assert [c.value for c in choices] == expected
    alice = await _autocomplete_ask(world, world.alice)
    only = await commands.transcript_choices(alice, "staff")  # type: ignore[arg-type]
    assert [c.name for c in only] == [f"{secret.id} · Staff pay next year?"]


@dataclass
class _AutocompleteAsk:
    """What autocompletion reads from its interaction: the server and the member typing
    (simcord runs no autocomplete requests, so the handler is called with the bot's real objects)."""

    guild: discord.Guild
    guild_id: int
    user: discord.Member


async def _autocomplete_ask(world: World, member: Any) -> _AutocompleteAsk:
    guild = world.bot.get_guild(world.guild.id)
    assert guild is not None
    return _AutocompleteAsk(
        guild, guild.id, guild.get_member(member.id) or await guild.fetch_member(member.id)
    )


async def test_a_second_debate_in_the_same_channel_is_refused(world: World) -> None:
    await world.start(**PAUSED)
    thread = world.thread()

    from_channel = await world.start(world.bob, topic="Another one")
    in_thread = await world.start(world.bob, thread, topic="Another one")

    _refused(
        from_channel,
        f"A debate is already running in this channel (<#{thread.id}>: “{TOPIC}”); stop it first or"
        " start one in another channel.",
    )
    assert in_thread.ephemeral and in_thread.response is not None
    assert in_thread.response.content.startswith("A debate is already running in this channel")
    assert len(world.channel.threads) == 1
    await _nothing_started(world, 1)


@pytest.mark.rostra(limits={"user_cooldown": 2})
async def test_a_second_start_too_soon_is_refused_until_the_cooldown_passes(world: World) -> None:
    await world.start()
    other = world.guild.create_text_channel("elsewhere")

    result = await world.start(channel=other)

    assert result.ephemeral and result.response is not None
    assert result.response.content.startswith("You started a debate moments ago; try again in ")
    assert other.threads == []
    await _nothing_started(world, 1)
    await asyncio.to_thread(time.sleep, 2.1)  # the store counts cooldowns in wall time, on every worker
    again = await world.start(channel=other)
    assert not again.ephemeral and len(other.threads) == 1


@pytest.mark.rostra(discord={"starter_roles": ["Debaters"]})
async def test_only_members_with_a_starter_role_or_manage_threads_may_start(world: World) -> None:
    debaters = world.guild.create_role("Debaters")
    mods = world.guild.create_role("Mods", permissions=discord.Permissions(manage_threads=True))
    dana = world.guild.add_member(world.env.create_user("dana"), roles=[debaters])
    erin = world.guild.add_member(world.env.create_user("erin"), roles=[mods])

    refused = await world.start(world.carol)

    _refused(
        refused,
        "You can't start or stop debates here: that takes one of the roles `Debaters` or the Manage Threads"
        " permission.",
    )
    await _nothing_started(world)
    assert not (await world.start(dana)).ephemeral
    assert not (await world.start(erin, world.guild.create_text_channel("mods"))).ephemeral
    await _nothing_started(world, 2)


async def test_missing_bot_permissions_are_named(world: World) -> None:
    me = world.guild.me
    assert me is not None
    locked = world.guild.create_text_channel(
        "no-threads", overwrites={me: discord.PermissionOverwrite(create_public_threads=False)}
    )

    result = await world.start(channel=locked)

    _refused(
        result,
        "I can't run a debate here: I'm missing **Create Public Threads** in this channel."
        " Ask an admin to grant it.",
    )
    await _nothing_started(world)


async def test_stop_ends_the_debate_with_a_closing_card(world: World) -> None:
    await world.start(**PAUSED)
    thread = world.thread()

    result = await world.alice.slash(thread, "debate stop")

    assert result.ephemeral and result.response is not None
    assert result.response.content == f"Stopping the debate; its closing card follows in <#{thread.id}>."
    events = await world.events()
    done = events[-1]
    assert isinstance(done, DebateCompleted) and (done.reason, done.detail) == ("stopped", "stopped by alice")
    closed = [e for e in events if isinstance(e, VotingClosed)]
    assert [c.decision_label for c in closed] == ["Vote cancelled: the debate ended"]
    closing = cards(thread)[-1]
    assert closing.title == f"🏁 Debate over: {TOPIC}"
    assert (closing.description or "").startswith(
        "**Ended:** stopped by alice\n\n**Summary**\nThe debate was stopped"
    )
    assert (await world.latest()).status == "stopped"
    assert "Vote cancelled" in (card(thread, "🗳️").embeds[0].description or "")
    after = await world.alice.slash(thread, "debate stop")
    _refused(after, "No debate is running here. Start one with `/debate start`.")


@pytest.mark.rostra(discord={"starter_roles": ["Debaters"]})
async def test_only_the_starter_or_someone_allowed_may_stop(world: World) -> None:
    debaters = world.guild.create_role("Debaters")
    dana = world.guild.add_member(world.env.create_user("dana"), roles=[debaters])
    await world.start(dana, **PAUSED)
    thread = world.thread()

    refused = await world.carol.slash(world.channel, "debate stop")

    _refused(
        refused,
        f"Only <@{dana.id}> (who started this debate) can stop it. You can't start or stop debates here: that"
        " takes one of the roles `Debaters` or the Manage Threads permission.",
    )
    assert not isinstance((await world.events())[-1], DebateCompleted)
    stopped = await dana.slash(world.channel, "debate stop")
    assert stopped.response is not None and stopped.response.content.startswith("Stopping the debate")
    assert cards(thread)[-1].title == f"🏁 Debate over: {TOPIC}"


async def test_status_shows_phase_speaker_round_and_time_left(world: World) -> None:
    await world.start(**PAUSED)
    thread = world.thread()

    in_thread = await world.bob.slash(thread, "debate status")
    in_channel = await world.bob.slash(world.channel, "debate status")

    assert in_thread.ephemeral and in_thread.response is not None
    record = await world.latest()
    lines = in_thread.response.content.splitlines()
    assert lines[0] == f"**{TOPIC}** (arena, debate `{record.id}`)"
    assert lines[1].startswith("Phase: voting · round 1 · speaking: ") and lines[1].endswith(
        f" in <#{thread.id}>"
    )
    assert lines[2] == "⏱ 0:00 elapsed · 5:00 left · 2 turns so far"
    assert in_channel.response is not None and in_channel.response.content == in_thread.response.content
    elsewhere = await world.bob.slash(world.guild.create_text_channel("quiet"), "debate status")
    _refused(elsewhere, "No debate is running here. Start one with `/debate start`.")


async def test_transcript_sends_the_debate_as_markdown_and_as_a_page(world: World) -> None:
    await world.start()
    record = await world.latest()

    result = await world.bob.slash(world.channel, "debate transcript")

    assert result.ephemeral and result.response is not None
    assert result.response.content == f"📜 Transcript of **{TOPIC}** (debate `{record.id}`)"
    attachment, page = result.response.attachments
    assert attachment.filename == f"rostra-{record.id}.md"
    text = (await attachment.read()).decode()
    assert text.startswith(f"# {TOPIC}\n")
    assert SCRIPT["proposition"][0] in text and SCRIPT["moderator"][0] in text
    assert page.filename == f"rostra-{record.id}.html"  # beside the Markdown: the page to share
    html = (await page.read()).decode()
    assert html.startswith("<!DOCTYPE html>") and f"<h1>{TOPIC}</h1>" in html
    assert SCRIPT["proposition"][0] in html and SCRIPT["moderator"][0] in html
    by_id = await world.bob.slash(
        world.guild.create_text_channel("other"), "debate transcript", debate=record.id
    )
    assert by_id.response is not None and by_id.response.attachments[0].filename == attachment.filename
    unknown = await world.bob.slash(world.channel, "debate transcript", debate="nope")
    assert (
        unknown.response is not None
        and unknown.response.content == "No debate `nope` has run in this server."
    )


HOSTILE = '<img src=x onerror="alert(1)"> <script>alert(2)</script> [link](javascript:alert(3))'


@pytest.mark.rostra(script={**SCRIPT, "proposition": [HOSTILE]})
async def test_the_transcript_page_keeps_stored_text_as_text(world: World) -> None:
    await world.start()

    result = await world.bob.slash(world.channel, "debate transcript")

    assert result.response is not None
    [page] = [a for a in result.response.attachments if a.filename.endswith(".html")]
    html = (await page.read()).decode()
    assert html_escape(HOSTILE) in html  # shown as the words it is
    assert "<img src=x" not in html and "<script>alert" not in html and 'href="javascript:' not in html


async def test_personas_lists_the_cast(world: World) -> None:
    result = await world.carol.slash(world.channel, "debate personas")

    assert result.ephemeral and result.response is not None
    [embed] = result.response.embeds
    text = embed.description or ""
    for persona in world.rt.personas.values():
        assert f"{persona.emoji} **{persona.name}** (`{persona.id}`)" in text
    assert "🪨 **Vera Stone** (`vera`) — arena opposition · oxford critic\n" in text
    assert (
        "🎙️ **Sol Amari** (`sol`) — arena moderator · oxford moderator · council moderator · panel synthesiser"
        in text
    )
    assert "🛠️ **Kit Nakamura** (`kit`) — council member · panellist\n" in text
