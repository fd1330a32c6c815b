"""`/debate start` end to end: the reply, the thread, the cards and the personas, in event order.

simcord gap: a webhook message sent with `thread=` lands in the parent channel, so persona messages
are read from the channel and their thread is checked on the recorded requests (`thread_id`).
"""

from __future__ import annotations

import discord
import pytest
from simcord import ChannelHandle

from core.events import DebateCompleted, TurnCompleted, VotingClosed
from tests.adapters.discord.conftest import SCRIPT, TOPIC, World, card, cards, json_of


def cards_of(thread: ChannelHandle) -> list[discord.Message]:
    return [m for m in thread.history() if m.embeds]


def _labels(world: World, thread_id: int) -> list[str]:
    """What was posted, in request order: cards by title, persona messages by speaker."""
    hooks = {id(r) for r in world.persona_requests()}
    out: list[str] = []
    for r in world.env.http_requests:
        if id(r) in hooks:
            out.append(f"persona:{json_of(r)['username']}")
        elif r.method == "POST" and r.path == f"/channels/{thread_id}/messages":
            embeds = json_of(r).get("embeds") or []
            out.append((embeds[0]["title"] if embeds else json_of(r)["content"]).split()[0])
    return out


async def test_start_defers_opens_a_thread_and_runs_the_debate_there(world: World) -> None:
    result = await world.start(topic=TOPIC)

    thread = world.thread()
    assert thread.name == TOPIC
    assert not result.ephemeral
    assert result.response is not None
    started = result.response.content.splitlines()[0]  # the result is added below when it ends
    assert started == f"🎙️ Debate started: **{TOPIC}** → <#{thread.id}>"
    # acknowledged in time: the deferral is the first thing the bot sends, before any work
    first = next(r for r in world.env.http_requests if r.path.startswith("/interactions/"))
    made = next(r for r in world.env.http_requests if r.path.endswith("/threads"))
    assert first.json == {"type": 5}
    assert world.env.http_requests.index(first) < world.env.http_requests.index(made)

    opening = cards(thread)[0]
    assert opening.title == f"🎙️ {TOPIC}"
    cast, how = opening.fields
    assert cast.name == "Cast" and "🪨 **Vera Stone** — against the motion" in (cast.value or "")
    assert how.name == "How to vote"
    assert how.value == (
        "After each exchange but the last the observers vote on whether the speaker keeps the floor, on a"
        " vote card in the thread. If they tie, **you decide**: react ✅ keep or ❌ replace on the vote"
        " card within 30 s. One vote each: your newest reaction still on the card counts."
    )

    events = await world.events()
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    # two rounds with the vote between them; none follows the last round
    assert [e.role for e in turns] == ["proposition", "opposition"] * 2 + ["moderator"]
    # personas speak through one webhook, under their own names, into the thread
    spoken = [m for m in world.channel.history() if m.webhook_id is not None]
    assert [m.author.name for m in spoken] == [t.speaker.name for t in turns]
    assert [m.content.splitlines()[-1] for m in spoken] == [
        SCRIPT["proposition"][0],
        SCRIPT["opposition"][0],
    ] * 2 + [SCRIPT["moderator"][0]]
    assert len({m.webhook_id for m in spoken}) == 1
    requests = world.persona_requests()
    assert requests and all(r.params.get("thread_id") == thread.id for r in requests)
    assert [json_of(r)["avatar_url"] for r in requests] == [t.speaker.avatar_url for t in turns]
    edits = world.persona_requests("PATCH")
    assert edits and all(r.params.get("thread_id") == thread.id for r in edits)

    vote = card(thread, "🗳️")
    assert "**Result:" in (vote.embeds[0].description or "")
    closing = cards(thread)[-1]
    assert closing.title == f"🏁 Debate over: {TOPIC}"
    assert [f.name for f in closing.fields] == ["Who spoke", "Figures"]
    assert isinstance(events[-1], DebateCompleted)

    order = _labels(world, thread.id)
    names = [f"persona:{t.speaker.name}" for t in turns]
    assert order == ["🎙️", names[0], names[1], "🗳️", *names[2:], "🏁"]


async def test_where_everything_was_posted_is_stored(world: World) -> None:
    await world.start()

    thread = world.thread()
    record = await world.latest()
    assert record.binding.platform == "discord"
    assert record.binding.channel == str(thread.id)
    assert record.binding.started_by == str(world.alice.id)
    values = await world.rt.store.binding_values(record.id)
    hook = world.persona_requests()[0].path.split("/")[2]
    assert values["discord.thread_id"] == str(thread.id)
    assert values["discord.origin_id"] == str(world.channel.id)
    assert values["discord.webhook_id"] == hook
    assert values["discord.persona_mode"] == "webhook"
    assert values["discord.slot.vote:v1"] == str(card(thread, "🗳️").id)
    spoken = [m for m in world.channel.history() if m.webhook_id is not None]
    assert [values[f"discord.slot.turn:t{i}"] for i in range(1, 6)] == [f"{m.id}@{hook}" for m in spoken]
    assert values["discord.slot.opening"] == str(cards_of(thread)[0].id)
    events = await world.events()
    assert values["discord.delivered"] == str(events[-1].seq)


MENTIONS = {
    **SCRIPT,
    "proposition": ["Hey @everyone and <@123>, listen up. Also @here and <@&456>."],
    "observer": [{"vote": "keep", "reason": "Pinging <@123> and @everyone is rude."}],
}


@pytest.mark.rostra(script=MENTIONS)
async def test_model_text_never_pings_anyone(world: World) -> None:
    await world.start()

    spoken = [m for m in world.channel.history() if m.webhook_id is not None]
    assert "@everyone and <@123>" in spoken[0].content
    carrying = [
        r
        for r in world.env.http_requests
        if r.method in ("POST", "PATCH")
        and isinstance(json_of(r), dict)
        and ("content" in json_of(r) or "embeds" in json_of(r))
    ]
    assert len(carrying) > 10
    assert all(json_of(r).get("allowed_mentions") == {"parse": []} for r in carrying)
    vote = card(world.thread(), "🗳️").embeds[0].description or ""
    assert "Pinging <@123> and @everyone is rude." in vote


@pytest.mark.rostra(discord={"streaming": False})
async def test_without_streaming_each_turn_is_posted_once_whole(world: World) -> None:
    await world.start()

    assert len(world.persona_requests()) == 5  # four turns and the summary
    assert world.persona_requests("PATCH") == []
    assert all("▌" not in json_of(r)["content"] for r in world.persona_requests())


@pytest.mark.rostra(discord={"edit_interval": 1.5})
async def test_streaming_edits_are_throttled(world: World) -> None:
    await world.start()

    events = await world.events()
    deltas = sum(1 for e in events if e.kind == "turn_delta")
    posts, edits = world.persona_requests(), world.persona_requests("PATCH")
    # no time passes on the debate's clock here, so each turn gets its first words and then,
    # held back by the throttle, only its final text: one edit per turn, whatever the deltas
    # (at least two a turn: its first words, then the rest, each of which could have been an edit).
    # The five turns come within the webhook's 2 s window (5 calls), so once it is busy a turn's
    # first words wait for room and the turn is posted whole by its final text.
    assert deltas >= len(posts) * 2
    streamed = [r for r in posts if json_of(r)["content"].endswith(" ▌")]
    assert len(posts) == 5 and len(streamed) >= 2
    assert len(edits) == len(streamed)
    assert not any(json_of(r)["content"].endswith(" ▌") for r in edits)
    assert all(posts.index(r) == i for i, r in enumerate(streamed))  # the first turns streamed


async def test_with_the_channels_webhook_busy_turns_are_posted_whole(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other debates in the channel keep its one persona webhook busy (5 calls per 2 s): a turn's
    first words would take a call its final text needs, so each turn is posted whole, once."""
    busy = world.bot.webhooks.window(world.channel.id, 0)
    monkeypatch.setattr(busy, "try_take", lambda **_: False)  # no room left for interim states
    await world.start()

    posts, edits = world.persona_requests(), world.persona_requests("PATCH")
    events = await world.events()
    texts = [e.text for e in events if isinstance(e, TurnCompleted)]
    assert [json_of(r)["content"].split("\n", 1)[-1] for r in posts] == texts
    assert edits == []


LONG = "\n\n".join(
    (f"Point {i}. " + "Cars shape cities more than any plan does. " * 9).strip() for i in range(12)
)


@pytest.mark.rostra(script={**SCRIPT, "proposition": [LONG]}, model={"max_tokens": {"turn": 4000}})
async def test_a_long_turn_is_split_into_messages_under_the_limit(world: World) -> None:
    await world.start()

    thread = world.thread()
    record = await world.latest()
    values = await world.rt.store.binding_values(record.id)
    ids = [part.split("@")[0] for part in values["discord.slot.turn:t1"].split(",")]
    assert len(ids) >= 3
    by_id = {str(m.id): m for m in world.channel.history()}
    parts = [by_id[i].content for i in ids]
    assert all(len(p) <= 2000 for p in parts)
    assert all(p.rstrip().endswith(".") for p in parts)
    assert "\n\n".join(parts).removeprefix("-# Round 1 · for the motion\n") == LONG
    assert all(r.params.get("thread_id") == thread.id for r in world.persona_requests())


async def test_a_debate_started_inside_a_thread_stays_in_that_thread(world: World) -> None:
    await world.start(topic="Warm-up")
    thread = world.thread()

    result = await world.start(world.bob, thread, topic="Is tea better than coffee?")

    assert result.response is not None and f"<#{thread.id}>" in result.response.content
    assert len(world.channel.threads) == 1
    assert cards(thread)[-1].title == "🏁 Debate over: Is tea better than coffee?"
    record = await world.latest()
    assert record.binding.channel == str(thread.id)
    closed = [e for e in await world.events(record.id) if isinstance(e, VotingClosed)]
    assert closed


FAILING = {
    **SCRIPT,
    "proposition": [{"error": "reply cut off"}],
    "observer": [{"error": "timeout"}, {"vote": "keep", "reason": "Fine."}],
}


@pytest.mark.rostra(script=FAILING)
async def test_failures_inside_the_debate_show_as_notices_and_fallbacks(world: World) -> None:
    await world.start()

    thread = world.thread()
    notices = [m.content for m in thread.history() if m.content.startswith("⚠️")]
    assert any("turn failed twice (reply cut off); a fallback line stands in." in n for n in notices)
    assert any("could not vote (timeout); counted as keep." in n for n in notices)
    spoken = [m for m in world.channel.history() if m.webhook_id is not None]
    assert spoken[0].content.endswith("lost the thread for a moment and yields the floor.)*")
    assert "*Could not vote; counted as keep.*" in (card(thread, "🗳️").embeds[0].description or "")
