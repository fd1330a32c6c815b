"""The pure renderer: events → what the thread shows (no Slack involved)."""

from __future__ import annotations

import json
from typing import Any

from adapters.chunking import split_message
from adapters.slack.render.events import SlackView
from adapters.slack.render.ops import OPENING, Delete, Op, Post, Update, Upload
from core.events import (
    Artifact,
    DebateCompleted,
    DebateStarted,
    HumanMode,
    HumanVoteOpened,
    Notice,
    TurnCompleted,
    TurnDelta,
    TurnStarted,
    Verdict,
    VoteCast,
    VotingClosed,
    VotingStarted,
)
from core.models import CastMember, PersonaRef, PersonaStats, Statistics, VoteOption, Voter

ADA = PersonaRef(id="ada", name="Ada Quill", emoji="🧮", avatar_url="https://example.org/ada.png")
VERA = PersonaRef(id="vera", name="Vera Stone", emoji="🪨")
SOL = PersonaRef(id="sol", name="Sol Amari", emoji="🎙️")
BASIL = PersonaRef(id="basil", name="Basil Thorne", emoji="🦉")
KEEP = VoteOption(key="keep", label="Keep", emoji="✅")
REPLACE = VoteOption(key="replace", label="Replace", emoji="❌")


def shown(op: Op) -> str:
    """Everything an op would show (text and block text)."""
    assert not isinstance(op, Delete | Upload)
    return op.text + "\n" + json.dumps(op.blocks, ensure_ascii=False)


def started(**settings: Any) -> DebateStarted:
    cast = (
        CastMember(persona=ADA, role="proposition"),
        CastMember(persona=BASIL, role="observer"),
        CastMember(persona=VERA, role="opposition"),
        CastMember(persona=SOL, role="moderator"),
    )
    return DebateStarted(
        seq=1,
        format="arena",
        topic="Ban <!channel> cars & vans?",
        cast=cast,
        settings={"duration": 300, "exchanges_per_round": 3, "humans": "tiebreak", **settings},
    )


def turn_started(turn_id: str = "t1", attempt: int = 1, speaker: PersonaRef = ADA) -> TurnStarted:
    return TurnStarted(
        turn_id=turn_id,
        speaker=speaker,
        role="proposition",
        round=1,
        heading="Round 1 · for",
        attempt=attempt,
    )


def completed(text: str, turn_id: str = "t1", **extra: Any) -> TurnCompleted:
    return TurnCompleted(turn_id=turn_id, speaker=ADA, role="proposition", round=1, text=text, **extra)


def test_opening_card_shows_topic_escaped_cast_and_how_to_vote() -> None:
    view = SlackView(streaming=True, limit=3000)
    (op,) = view.render(started())
    assert isinstance(op, Update)
    assert op.key == OPENING
    assert not op.interim
    text = shown(op)
    assert "Ban &lt;!channel&gt; cars &amp; vans?" in text
    assert "<!channel>" not in text
    assert "Ada Quill* — for the motion" in text
    assert "Vera Stone* — against the motion" in text
    assert "If they tie, *you decide*: react ✅ Keep or ❌ Replace on the vote card" in text
    assert "5:00 of debate" in text
    assert "a vote every 3 exchanges" in text


def test_streaming_posts_then_edits_and_ends_on_the_authoritative_text() -> None:
    view = SlackView(streaming=True, limit=3000)
    (post,) = view.render(turn_started())
    assert isinstance(post, Post)
    assert post.persona == ADA
    assert post.key == "turn:t1"
    assert post.text == "_Round 1 · for_\n_…_"
    (edit,) = view.render(TurnDelta(turn_id="t1", text="Hello <@U1"))
    assert isinstance(edit, Update)
    assert edit.interim
    assert edit.text == "_Round 1 · for_\nHello &lt;@U1 …"
    (final,) = view.render(completed("Hello <@U1>, cars must go."))
    assert isinstance(final, Update)
    assert not final.interim
    assert final.text == "_Round 1 · for_\nHello &lt;@U1&gt;, cars must go."


def test_a_retry_voids_the_partial_text() -> None:
    view = SlackView(streaming=True, limit=3000)
    view.render(turn_started())
    view.render(TurnDelta(turn_id="t1", text="Half a thou"))
    (reset,) = view.render(turn_started(attempt=2))
    assert isinstance(reset, Update)
    assert not reset.interim
    assert "tries again" in reset.text
    assert "Half a thou" not in reset.text
    (edit,) = view.render(TurnDelta(turn_id="t1", text="A fresh start"))
    assert isinstance(edit, Update)
    assert "Half" not in edit.text
    assert "A fresh start" in edit.text


def test_a_long_streamed_turn_grows_into_parts_and_shrinks_back_to_the_final_text() -> None:
    view = SlackView(streaming=True, limit=320)
    view.render(turn_started())
    sentence = "Cars crowd the street and the kids. "
    ops: list[Op] = []
    for _ in range(20):
        ops += view.render(TurnDelta(turn_id="t1", text=sentence))
    posts = [op for op in ops if isinstance(op, Post)]
    assert [p.key for p in posts] == [f"turn:t1:{i}" for i in range(1, len(posts) + 1)]
    assert len(posts) >= 2
    final_text = sentence * 6
    final = view.render(completed(final_text.strip()))
    expected = split_message("_Round 1 · for_\n" + final_text.strip(), view.persona_limit)
    deletes = [op.key for op in final if isinstance(op, Delete)]
    assert deletes == [f"turn:t1:{i}" for i in range(len(expected), len(posts) + 1)]
    updated = {op.key: op.text for op in final if isinstance(op, Update)}
    for index, part in enumerate(expected):
        key = "turn:t1" if index == 0 else f"turn:t1:{index}"
        assert updated.get(key, part) == part


def test_without_streaming_whole_turns_are_posted_once() -> None:
    view = SlackView(streaming=False, limit=3000)
    assert view.render(turn_started()) == []
    assert view.render(TurnDelta(turn_id="t1", text="partial")) == []
    (post,) = view.render(completed("All of it.", fallback=False))
    assert isinstance(post, Post)
    assert post.persona == ADA
    assert post.text == "_Round 1 · for_\nAll of it."


def test_fallback_and_interrupted_turns_are_marked() -> None:
    view = SlackView(streaming=False, limit=3000)
    (post,) = view.render(completed("(Ada yields.)", fallback=True))
    assert isinstance(post, Post)
    assert post.text.endswith("_(Ada yields.)_")
    (post,) = view.render(completed("Cut short", turn_id="t2", interrupted=True))
    assert isinstance(post, Post)
    assert post.text.endswith("Cut short _(interrupted)_")


def vote_started(humans: HumanMode = "tiebreak") -> VotingStarted:
    return VotingStarted(
        vote_id="v1",
        title="Should Ada keep the floor?",
        subject=ADA,
        options=(KEEP, REPLACE),
        voters=(BASIL, VERA),
        humans=humans,
    )


def test_vote_card_lives_through_the_ballot() -> None:
    view = SlackView(streaming=True, limit=3000)
    (card,) = view.render(vote_started())
    assert isinstance(card, Post)
    assert card.key == "vote:v1"
    assert card.reactions == ("white_check_mark", "x")
    assert "🦉 *Basil Thorne* — _thinking…_" in shown(card)
    (live,) = view.render(
        VoteCast(vote_id="v1", voter=Voter.of(BASIL), choice="keep", reason="Sharp <@U9> answer.")
    )
    assert isinstance(live, Update)
    assert live.interim
    assert "*Basil Thorne* → ✅ Keep — Sharp &lt;@U9&gt; answer." in shown(live)
    (tie,) = view.render(HumanVoteOpened(vote_id="v1", options=(KEEP, REPLACE), window=30, reason="tie"))
    assert isinstance(tie, Update)
    assert not tie.interim
    assert "It's a tie: people decide!" in shown(tie)
    assert "within 30 s" in shown(tie)
    (person,) = view.render(
        VoteCast(vote_id="v1", voter=Voter(id="U7", name="U7", human=True), choice="replace")
    )
    assert "People so far: ✅ Keep 0 · ❌ Replace 1" in shown(person)
    (closed,) = view.render(
        VotingClosed(
            vote_id="v1",
            tally={"keep": 1, "replace": 1},
            human_tally={"keep": 0, "replace": 1},
            decision="replace",
            decision_label="Ada Quill is replaced",
            tie_broken_by="humans",
            note="Tie broken by the people in the channel (keep 0, replace 1).",
        )
    )
    assert isinstance(closed, Update)
    assert not closed.interim
    text = shown(closed)
    assert "*Result: Ada Quill is replaced*" in text
    assert "AI: ✅ Keep 1 · ❌ Replace 1" in text
    assert "People: ✅ Keep 0 · ❌ Replace 1" in text
    assert "*Vera Stone* — _no vote_" in text
    assert "Voting is closed." in text


def test_no_ballot_reactions_when_people_do_not_vote() -> None:
    (card,) = SlackView(streaming=True, limit=3000).render(vote_started(humans="off"))
    assert isinstance(card, Post)
    assert card.reactions == ()


def stats() -> Statistics:
    return Statistics(
        rounds=1,
        turns=3,
        words=40,
        per_persona=(PersonaStats(persona=ADA, turns=1, words=20, judged=1, votes_keep=3),),
    )


def test_closing_card_repeats_the_summary_only_when_the_moderator_did_not_say_it() -> None:
    view = SlackView(streaming=False, limit=3000)
    view.render(started())
    view.render(
        TurnCompleted(turn_id="t3", speaker=SOL, role="moderator", round=1, text="Both sides had a point.")
    )
    closing, opening = view.render(
        DebateCompleted(seq=9, reason="max_rounds", stats=stats(), summary="Both sides had a point.")
    )
    assert isinstance(closing, Post)
    assert "*🏁 The end*" in shown(closing)
    assert "Summary" not in shown(closing)
    assert "Ada Quill" in shown(closing)
    assert "1 round · 3 turns · 40 words" in shown(closing)
    assert isinstance(opening, Update)
    assert opening.key == OPENING
    assert "🏁 Finished" in shown(opening)

    stopped = SlackView(streaming=False, limit=3000)
    closing, _ = stopped.render(
        DebateCompleted(
            seq=5,
            reason="stopped",
            detail="stopped by a member",
            stats=stats(),
            summary="Stopped after <@U1>.",
        )
    )
    assert "*Summary*" in shown(closing)
    assert "Stopped after &lt;@U1&gt;." in shown(closing)
    assert "stopped by a member" in shown(closing)


def test_notices_and_artifacts() -> None:
    view = SlackView(streaming=True, limit=3000)
    (notice,) = view.render(Notice(seq=4, level="warning", code="x", message="Vera <!here> failed"))
    assert isinstance(notice, Post)
    assert notice.persona is None
    assert notice.text == "⚠️ Vera &lt;!here&gt; failed"
    (upload,) = view.render(Artifact(name="answers.md", media_type="text/markdown", content="# Q&A\n"))
    assert upload == Upload(filename="answers.md", content="# Q&A\n", title="answers.md")


def test_an_audience_vote_without_ai_voters_asks_for_your_vote() -> None:
    view = SlackView(streaming=True, limit=3000)
    audience = VotingStarted(
        vote_id="a1", title="Where do you stand?", options=(KEEP, REPLACE), humans="vote"
    )
    view.render(audience)
    (opened,) = view.render(HumanVoteOpened(vote_id="a1", options=(KEEP, REPLACE), window=60, reason="vote"))
    assert "*Vote now:* react with ✅ Keep or ❌ Replace within 60 s." in shown(opened)
    assert "one more vote" not in shown(opened)


def opening_text(fmt: str, cast: tuple[CastMember, ...] = (), **settings: Any) -> str:
    view = SlackView(streaming=True, limit=3000)
    (op,) = view.render(DebateStarted(seq=1, format=fmt, topic="Cars?", cast=cast, settings=settings))
    return shown(op)


def test_each_format_says_how_people_take_part() -> None:
    arena = opening_text("arena", (CastMember(persona=ADA, role="proposition"),), humans="vote")
    assert "and *you vote too*: react ✅ Keep or ❌ Replace on each vote card" in arena
    arena_off = opening_text("arena", (CastMember(persona=ADA, role="proposition"),), humans="off")
    assert "only they decide, people watch" in arena_off
    assert "react" not in arena_off

    judge = (CastMember(persona=SOL, role="judge"),)
    oxford = opening_text("oxford", judge, humans="vote", human_window=60, rounds=3)
    assert "reacting 👍 For, 👎 Against or 🤷 Undecided on each audience card within 60 s" in oxford
    assert "before the debate and again after the verdict" in oxford
    assert "The judge rules on the debate; there is no audience vote this time" in opening_text(
        "oxford", judge, humans="off"
    )

    members = (CastMember(persona=ADA, role="council"), CastMember(persona=BASIL, role="council"))
    council = opening_text("council", members, humans="tiebreak", strategy="weighted", weights={"ada": 1.5})
    assert "react with a tied proposal's number (1️⃣, 2️⃣, 3️⃣, …)" in council
    assert "votes weighted by expertise" in council
    assert "Ada Quill* — proposes, revises and votes (expertise weight 1.5)" in council
    council_off = opening_text("council", members, humans="off", strategy="majority")
    assert "a tie goes to the earliest proposal" in council_off
    assert "react" not in council_off

    panellists = (
        CastMember(persona=BASIL, role="panellist"),
        CastMember(persona=SOL, role="synthesiser"),
    )
    documents = [{"name": "<b>.md", "chars": 1200, "panellist": "basil"}]
    panel = opening_text("panel", panellists, rounds=1, documents=documents, questions=["Cars?"])
    assert "*How it works:* Nothing to vote on:" in panel
    assert "Sol Amari writes the final answer" in panel
    assert "Basil Thorne* — answers from &lt;b&gt;.md, 1,200 characters" in panel
    assert "react" not in panel


def council_vote() -> tuple[SlackView, tuple[VoteOption, ...]]:
    options = tuple(
        VoteOption(key=f"p{i}", label=f"{p.name}'s proposal", emoji=e)
        for i, (p, e) in enumerate([(ADA, "1️⃣"), (BASIL, "2️⃣"), (VERA, "3️⃣")], start=1)
    )
    view = SlackView(streaming=True, limit=3000)
    view.render(DebateStarted(format="council", topic="How should the city cut car traffic?", cast=()))
    view.render(
        VotingStarted(
            vote_id="v1", title="Which one?", options=options, voters=(ADA, BASIL), humans="tiebreak"
        )
    )
    return view, options


def test_a_tie_among_some_options_names_only_those_in_labels() -> None:
    view, options = council_vote()
    (abstained,) = view.render(
        VoteCast(vote_id="v1", voter=Voter.of(BASIL), choice="abstain", reason="Neither.", defaulted=False)
    )
    assert "🦉 *Basil Thorne* abstains — Neither." in shown(abstained)
    (tie,) = view.render(HumanVoteOpened(vote_id="v1", options=options[:2], window=30, reason="tie"))
    text = shown(tie)
    assert (
        "*It's a tie between 1️⃣ Ada Quill's proposal and 2️⃣ Basil Thorne's proposal: people decide!*"
        " React with one of them within 30 s; the other options don't count." in text
    )
    assert "People so far: 1️⃣ Ada Quill's proposal 0 · 2️⃣ Basil Thorne's proposal 0" in text
    assert "Vera" not in text.split("People so far")[1]
    (closed,) = view.render(
        VotingClosed(
            vote_id="v1",
            tally={"p1": 1, "p2": 1, "p3": 0},
            human_tally={"p1": 0, "p2": 2},
            decision="p2",
            decision_label="Basil Thorne's proposal wins",
            tie_broken_by="humans",
        )
    )
    text = shown(closed)
    assert "People: 1️⃣ Ada Quill's proposal 0 · 2️⃣ Basil Thorne's proposal 2" in text
    assert "AI: 1️⃣ Ada Quill's proposal 1 · 2️⃣ Basil Thorne's proposal 1 · 3️⃣ Vera Stone's proposal 0" in text
    (verdict,) = view.render(
        Verdict(
            seq=20,
            title="Council decision",
            winner="p2",
            winner_label="Basil Thorne's proposal",
            reasoning="Do it <now>.",
            tally={"p1": 1, "p2": 1},
        )
    )
    text = shown(verdict)
    assert "Votes: 1️⃣ Ada Quill's proposal 1 · 2️⃣ Basil Thorne's proposal 1" in text
    assert "Abstained: Basil Thorne" in text  # as the Discord card says it (adapters/ballot_card.py)
    assert "Do it &lt;now&gt;." in text
    assert "p1" not in text
