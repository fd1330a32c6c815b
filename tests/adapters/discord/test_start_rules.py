"""`/debate start` asks only for the permissions this debate needs, refuses late failures privately
with the real reason, and shows a topic's Markdown as written."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from simcord import ResponseMessage

from adapters.delivery.outage import OutageLimits
from adapters.discord.delivery import opening
from adapters.discord.launch import Launcher
from core.errors import AdmissionError
from tests.adapters.discord.conftest import World


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"humans": "off"}, False),  # nobody votes with reactions
        ({"format": "panel", "document1": ("notes.md", b"# Notes\n\nTrams carry 41 million riders.")}, False),
        ({"humans": "vote"}, True),
        ({"format": "oxford", "humans": "vote"}, True),
    ],
)
async def test_add_reactions_is_asked_for_only_when_people_vote(
    world: World, options: dict[str, Any], refused: bool
) -> None:
    channel = world.guild.create_text_channel(
        "no-reactions", overwrites={world.me: discord.PermissionOverwrite(add_reactions=False)}
    )
    result = await world.start(channel=channel, **options)
    if refused:
        assert result.ephemeral and result.response is not None
        assert "Add Reactions" in result.response.content
        assert channel.threads == []
    else:
        assert len(channel.threads) == 1, result.response


async def test_attach_files_is_not_asked_for_an_arena(world: World) -> None:
    channel = world.guild.create_text_channel(
        "no-files", overwrites={world.me: discord.PermissionOverwrite(attach_files=False)}
    )
    assert not (await world.start(channel=channel)).ephemeral
    refused = await world.start(
        world.bob, channel, format="panel", document1=("notes.md", b"# Notes\n\nText.")
    )
    assert refused.ephemeral and refused.response is not None
    assert "Attach Files" in refused.response.content


async def test_a_thread_discord_failed_to_open_is_opened_again_and_the_debate_starts(world: World) -> None:
    """Discord answers 500 to the thread's opening once: the start looks for the thread (none was
    made), opens it again, and the debate starts in that one thread (it used to be refused)."""
    world.env.inject_error("POST", "/channels/*/threads", status=500, code=0, message="Internal Server Error")

    result = await world.start()

    replies: list[ResponseMessage | None] = [*result.followups] or [result.response]
    [card] = replies
    assert card is not None and not card.ephemeral
    assert card.content.startswith("🎙️ Debate started"), card.content
    [thread] = world.channel.threads
    assert f"<#{thread.id}>" in card.content
    assert len(await world.rt.store.list_debates(5)) == 1


async def test_a_late_refusal_is_private_and_says_what_happened(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discord answers 500 to every try at the thread for longer than a start waits: the person is
    told, privately, that Discord did not answer and nothing started."""
    monkeypatch.setattr(opening, "OPENING_WAIT", OutageLimits(limit=1.0, first_probe=0.2, longest_probe=0.4))
    world.env.inject_error(
        "POST", "/channels/*/threads", status=500, code=0, message="Internal Server Error", times=None
    )

    result = await world.start()

    assert result.response is None  # the public "thinking…" reply was withdrawn
    [told] = result.followups
    assert told.ephemeral
    assert told.content.startswith("Discord didn't answer when I opened the debate's thread (500")
    assert "permission" not in told.content
    assert world.channel.threads == []
    assert await world.rt.store.list_debates(5) == []


async def test_while_a_refusal_waits_for_discord_the_channel_is_free_for_another_start(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread cannot be opened: as the person is told (an answer that waits up to two minutes
    for Discord, `until_discord_answers`), another start in that channel, through any worker, is
    admitted. It used to be refused as busy: the refusal was said under the start's claim, held for
    as long as Discord took to take it. (simcord runs one interaction at a time, so Bob's start is
    asked of the store at the moment Alice's refusal begins.)"""
    monkeypatch.setattr(opening, "OPENING_WAIT", OutageLimits(limit=1.0, first_probe=0.2, longest_probe=0.4))
    world.env.inject_error(
        "POST", "/channels/*/threads", status=500, code=0, message="Internal Server Error", times=None
    )
    admitted: list[bool] = []
    refuse_late = Launcher._refuse_late

    async def refuse_while_bob_starts(interaction: discord.Interaction, text: str, *, private: bool) -> None:
        try:  # Bob, through any worker, as Alice's refusal waits for Discord
            claim = await world.rt.admission.admit(
                platform="discord", scope=str(world.guild.id), channel=str(world.channel.id), user="bob"
            )
        except AdmissionError:
            admitted.append(False)
        else:
            admitted.append(True)
            async with claim:
                pass
        await refuse_late(interaction, text, private=private)

    monkeypatch.setattr(Launcher, "_refuse_late", staticmethod(refuse_while_bob_starts))
    result = await world.start()

    assert admitted == [True]
    assert result.response is None  # the public "thinking…" reply was withdrawn
    [told] = result.followups
    assert told.ephemeral and told.content.startswith("Discord didn't answer when I opened"), told.content


async def test_a_topics_markdown_is_shown_as_written(world: World) -> None:
    topic = "Is **bold** [a link](https://evil.example) ok?"

    result = await world.start(topic=topic)

    replies: list[ResponseMessage | None] = [*result.followups] or [result.response]
    [reply] = replies
    assert reply is not None
    assert "\\*\\*bold\\*\\*" in reply.content and "**bold**" not in reply.content.replace("\\*", "")
    assert "\\[a link](https://evil.example)" in reply.content  # a masked link no more


async def test_a_channel_where_the_bot_cannot_send_is_refused_before_its_result_is_lost(world: World) -> None:
    # the channel gets the result when the debate ends: without Send Messages there it would be a 403
    channel = world.guild.create_text_channel(
        "announcements", overwrites={world.me: discord.PermissionOverwrite(send_messages=False)}
    )
    result = await world.start(channel=channel)
    assert result.ephemeral and result.response is not None
    assert "**Send Messages**" in result.response.content
    assert channel.threads == []


async def test_inside_a_thread_send_messages_in_the_parent_is_not_needed(world: World) -> None:
    channel = world.guild.create_text_channel(
        "announcements", overwrites={world.me: discord.PermissionOverwrite(send_messages=False)}
    )
    await world.start(world.bob, world.channel)  # a thread to start the next debate in
    thread = world.thread()
    await world.env.settle()
    result = await world.start(channel=thread)
    assert not result.ephemeral, result.response
    assert channel.threads == []
