"""Events → what the thread shows, without Discord: the renderer is pure."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from adapters.discord.render.cards import as_bot_post
from adapters.discord.render.events import CLOSING, CURSOR, OPENING, DiscordView
from adapters.discord.render.ops import MESSAGE_LIMIT, CardAuthor, Op, Post, React, Show
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import (
    DebateCompleted,
    Event,
    HumanVoteOpened,
    TurnCompleted,
    TurnDelta,
    TurnStarted,
    VoteCast,
    VotingClosed,
    VotingStarted,
)
from core.formats.arena import OPTIONS
from core.models import PersonaRef, Statistics, Voter
from core.spec import DebateSpec
from tests.adapters.discord.conftest import SCRIPT
from tests.helpers import RecordingSink, make_config, write_script

ADA = PersonaRef(id="ada", name="Ada Quill", emoji="🧮", avatar_url="https://img/ada.png", color="red")
BASIL = PersonaRef(id="basil", name="Basil Thorne", emoji="🦉")


async def _debate_events(tmp_path: Path) -> list[Event]:
    script = write_script(tmp_path, SCRIPT)
    config = make_config(tmp_path, model={"script": str(script), "latency": 0}, limits={"max_rounds": 2})
    sink = RecordingSink()
    async with Runtime(config, clock=FakeClock()) as rt:
        options = {"exchanges_per_round": 1, "humans": "tiebreak"}
        handle = await rt.start_debate(DebateSpec("arena", "Should cities ban cars?", options), sink)
        await handle.wait()
    return sink.events


def _render_all(view: DiscordView, events: list[Event]) -> list[Op]:
    return [op for event in events for op in view.render(event)]


def _slots_in_order(ops: list[Op]) -> list[str]:
    return list(dict.fromkeys(op.slot for op in ops if isinstance(op, Show)))


def _last(ops: list[Op], slot: str) -> Show:
    return [op for op in ops if isinstance(op, Show) and op.slot == slot][-1]


async def test_a_whole_debate_shows_its_parts_in_order(tmp_path: Path) -> None:
    ops = _render_all(DiscordView(streaming=True), await _debate_events(tmp_path))

    turns = ["turn:t1", "turn:t2", "vote:v1", "turn:t3", "turn:t4", "turn:t5"]  # no vote after round 2
    assert _slots_in_order(ops) == [OPENING, *turns, CLOSING]
    # no human window opened (no tie): Rostra put no reactions of its own on the vote card
    assert not any(isinstance(op, React) for op in ops)
    # streamed with a cursor, ending on the authoritative text without it
    turn = [op for op in ops if isinstance(op, Show) and op.slot == "turn:t1"]
    assert all(op.live and op.posts[-1].content.endswith(CURSOR) for op in turn[:-1])
    assert not turn[-1].live
    assert turn[-1].posts == (
        Post(
            content=f"-# Round 1 · for the motion\n{SCRIPT['proposition'][0]}",
            persona=turn[-1].posts[0].persona,
        ),
    )
    opening = _first(ops, OPENING).posts[0].cards[0]
    assert opening.title == "🎙️ Should cities ban cars?"
    cast = opening.fields[0].value
    assert "🪨 **Vera Stone** — against the motion" in cast and "🎙️ **Sol Amari** — moderates" in cast
    assert opening.fields[1].value.endswith(
        "If they tie, **you decide**: react ✅ keep or ❌ replace on the vote card within 30 s."
        " One vote each: your newest reaction still on the card counts."
    )
    closing = _last(ops, CLOSING).posts[0].cards[0]
    assert closing.title == "🏁 Debate over: Should cities ban cars?"
    assert "**Summary**" not in closing.description  # the moderator already said it


def _first(ops: list[Op], slot: str) -> Show:
    return next(op for op in ops if isinstance(op, Show) and op.slot == slot)


async def test_without_streaming_each_turn_is_shown_once_whole(tmp_path: Path) -> None:
    ops = _render_all(DiscordView(streaming=False), await _debate_events(tmp_path))
    turns = [op for op in ops if isinstance(op, Show) and op.slot.startswith("turn:")]
    assert [op.slot for op in turns] == [f"turn:t{i}" for i in range(1, 6)]
    assert not any(op.live for op in turns)


def test_a_retried_turn_starts_over_and_ends_on_the_final_text() -> None:
    view = DiscordView(streaming=True)
    start = TurnStarted(turn_id="t1", speaker=ADA, role="proposition", round=1, heading="Round 1")
    view.render(start)
    view.render(TurnDelta(turn_id="t1", text="half a thou"))
    retry = view.render(start.model_copy(update={"attempt": 2}))
    assert retry == [Show("turn:t1", (Post(content="-# Round 1\n↻ *starting over…*" + CURSOR, persona=ADA),))]
    [again] = view.render(TurnDelta(turn_id="t1", text="A fresh"))
    assert isinstance(again, Show) and again.posts[0].content == "-# Round 1\nA fresh" + CURSOR
    final = view.render(
        TurnCompleted(turn_id="t1", speaker=ADA, role="proposition", round=1, text="A fresh start.")
    )
    assert final == [Show("turn:t1", (Post(content="-# Round 1\nA fresh start.", persona=ADA),))]


def test_a_long_turn_becomes_several_messages_in_the_personas_name() -> None:
    view = DiscordView(streaming=False)
    view.render(TurnStarted(turn_id="t1", speaker=ADA, role="proposition", round=1, heading="Round 1"))
    text = "\n\n".join(f"Paragraph {i}. " + "a reasonably long sentence goes here. " * 12 for i in range(15))
    [show] = view.render(TurnCompleted(turn_id="t1", speaker=ADA, role="proposition", round=1, text=text))
    assert isinstance(show, Show) and len(show.posts) >= 3
    assert all(p.persona == ADA and len(p.content) <= MESSAGE_LIMIT for p in show.posts)


def test_the_vote_card_fills_in_live_and_closes_with_the_result() -> None:
    view = DiscordView(streaming=True)
    started = VotingStarted(
        vote_id="v1",
        title="Should Ada Quill keep the floor?",
        subject=ADA,
        options=OPTIONS,
        voters=(BASIL,),
        humans="tiebreak",
    )
    [card] = view.render(started)  # no seeds yet: people may not vote until a window opens
    assert isinstance(card, Show)
    assert "🦉 **Basil Thorne** — *thinking…*" in card.posts[0].cards[0].description
    assert (
        "If the observers tie, people decide: react with ✅ Keep or ❌ Replace."
        in card.posts[0].cards[0].description
    )

    [after_vote] = view.render(
        VoteCast(vote_id="v1", voter=Voter.of(BASIL), choice="replace", reason="It drifted.")
    )
    assert "🦉 **Basil Thorne** → ❌ Replace — It drifted." in _description(after_vote)

    opened_at = datetime(2030, 1, 1, tzinfo=UTC)
    [window, seeds] = view.render(
        HumanVoteOpened(vote_id="v1", options=OPTIONS, window=30, reason="tie", at=opened_at)
    )
    assert seeds == React("vote:v1", ("✅", "❌"))
    ends = int(opened_at.timestamp()) + 30
    assert (
        "**It's a tie: people decide!** React with ✅ Keep or ❌ Replace within 30 s. One vote each:"
        " your newest reaction still on the card counts.\nPeople so far: ✅ Keep 0 · ❌ Replace 0"
        f" · voting closes <t:{ends}:R>"
    ) in _description(window)
    person = Voter(id="42", name="alice", human=True)
    [tally] = view.render(VoteCast(vote_id="v1", voter=person, choice="replace"))
    assert isinstance(tally, Show) and tally.live
    assert "People so far: ✅ Keep 0 · ❌ Replace 1" in _description(tally)

    [closed] = view.render(
        VotingClosed(
            vote_id="v1",
            tally={"keep": 1, "replace": 1},
            human_tally={"keep": 0, "replace": 1},
            decision="replace",
            decision_label="Ada Quill is replaced",
            tie_broken_by="humans",
            note="Tie broken by the people in the channel.",
        )
    )
    text = _description(closed)
    assert "**Result: Ada Quill is replaced**" in text
    assert "AI: ✅ Keep 1 · ❌ Replace 1" in text and "People: ✅ Keep 0 · ❌ Replace 1" in text
    assert "voting closes" not in text
    assert isinstance(closed, Show) and closed.posts[0].cards[0].footer == (
        "Vote v1 · closed: reactions no longer count"
    )


def _description(op: Op) -> str:
    assert isinstance(op, Show)
    return op.posts[0].cards[0].description


def test_a_summary_that_differs_from_the_moderators_last_turn_is_on_the_closing_card() -> None:
    view = DiscordView(streaming=False)
    ops = view.render(
        DebateCompleted(
            reason="stopped",
            detail="stopped by alice",
            stats=Statistics(),
            summary="The debate was stopped after 2 turns.",
        )
    )
    card = _last(ops, CLOSING).posts[0].cards[0]
    assert (
        card.description
        == "**Ended:** stopped by alice\n\n**Summary**\nThe debate was stopped after 2 turns."
    )


def test_without_a_webhook_a_persona_speaks_as_an_embed_author() -> None:
    post = as_bot_post(Post(content="Hello @everyone", persona=ADA))
    [card] = post.cards
    assert post.content == "" and post.persona is None
    assert card.author == CardAuthor(name="Ada Quill", icon_url="https://img/ada.png")
    assert card.description == "Hello @everyone"
