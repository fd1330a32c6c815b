"""The council's rules, each shown by a whole debate through the real runtime (fake clock)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from adapters.console import ConsoleView
from core.errors import InvalidChoiceError, SpecError
from core.events import (
    DebateStarted,
    Event,
    HumanVoteOpened,
    Notice,
    TurnStarted,
    Verdict,
    VoteCast,
    VotingStarted,
)
from core.formats.council import closeness, similarity
from core.prompts import council as prompts
from core.session import DebateHandle
from core.transcript import to_markdown
from tests.core.runs import Run, run_debate

QUESTION = "How should our city cut car traffic downtown?"

# Seats in config order: their proposals are p1..p4 on the ballot.
PROPOSALS = {
    "ada": "Price the roads: a congestion charge on the central district, with the revenue paying for buses.",
    "dario": "Auction kerb space block by block and let parking prices find their level.",
    "esme": "Close school streets to cars at drop-off times, with exemptions for disabled drivers.",
    "kit": "Build protected bike lanes on the ten busiest corridors within three years.",
}
NAMES = {"ada": "Ada Quill", "dario": "Dario Vance", "esme": "Esme Hart", "kit": "Kit Nakamura"}


def ballot(
    votes: dict[str, str | dict[str, Any]], revisions: dict[str, list[Any]] | None = None
) -> dict[str, list[Any]]:
    """Each member proposes (and revises, if given), then votes: a key, "abstain", or a raw reply."""
    script: dict[str, list[Any]] = {}
    for pid, text in PROPOSALS.items():
        vote = votes[pid]
        reply = {"choice": vote, "reason": f"{pid} chooses {vote}"} if isinstance(vote, str) else vote
        script[f"persona:{pid}:council"] = [text, *(revisions or {}).get(pid, []), reply]
    return script


def weights(**seats: float) -> dict[str, Any]:
    return {"council": {"agents": [{"persona": pid, "weight": w} for pid, w in seats.items()]}}


async def council(tmp_path: Path, script: dict[str, Any] | None = None, **options: Any) -> Run:
    config = options.pop("config", {})
    hook = options.pop("hook", None)
    return await run_debate(
        tmp_path,
        fmt="council",
        topic=QUESTION,
        script=script,
        options={"rounds": 0, "humans": "off", **options},
        hook=hook,
        model={"latency": 0},
        **config,
    )


def render(events: list[Event]) -> str:
    console = Console(record=True, width=120, color_system=None)
    view = ConsoleView()
    for event in events:
        for piece in view.render(event):
            console.print(piece.renderable, end="" if piece.inline else "\n", soft_wrap=piece.inline)
    return console.export_text()


# --- proposals and revisions -----------------------------------------------------------------


async def test_members_propose_then_revise_all_at_once_and_every_round_is_in_the_transcript(
    tmp_path: Path,
) -> None:
    slow = {pid: {"say": text, "delay": 10} for pid, text in PROPOSALS.items()}
    script = {
        f"persona:{pid}:council": [
            slow[pid],
            f"{NAMES[pid]} revises once.",
            f"{NAMES[pid]} revises twice.",
            {"choice": "p1", "reason": "Simplest to run."},
        ]
        for pid in PROPOSALS
    }
    run = await council(tmp_path, script, rounds=2)

    started = run.of(DebateStarted)[0]
    assert {m.persona.id: m.role for m in started.cast} == dict.fromkeys(PROPOSALS, "council")
    assert started.settings["strategy"] == "majority"
    assert started.settings["weights"] == {"ada": 1.5, "dario": 1.2, "esme": 1.0, "kit": 1.3}
    headings = [(s.speaker.id, s.heading) for s in run.of(TurnStarted)]
    assert headings == [
        *((pid, "Round 0 · proposal") for pid in PROPOSALS),
        *((pid, "Round 1 · revision") for pid in PROPOSALS),
        *((pid, "Round 2 · revision") for pid in PROPOSALS),
    ]
    assert all(t.role == "council" for t in run.turns())
    # four members taking 10 s each: at once, round 0 costs ~10 s of the clock, not 40 s
    assert 10 <= run.result.stats.debate_seconds < 20
    markdown = to_markdown(run.record, run.stored)
    emoji = {m.persona.id: m.persona.emoji for m in started.cast}
    for pid, text in PROPOSALS.items():
        who = f"{emoji[pid]} {NAMES[pid]}"
        assert f"## Round 0 · proposal: {who}\n\n{text}" in markdown
        assert f"## Round 1 · revision: {who}\n\n{NAMES[pid]} revises once." in markdown
        assert f"## Round 2 · revision: {who}\n\n{NAMES[pid]} revises twice." in markdown
    # the latest proposal is what stands on the ballot
    options = run.of(VotingStarted)[0].options
    assert [(o.key, o.label, o.emoji) for o in options] == [
        ("p1", "Ada Quill's proposal", "1️⃣"),
        ("p2", "Dario Vance's proposal", "2️⃣"),
        ("p3", "Esme Hart's proposal", "3️⃣"),
        ("p4", "Kit Nakamura's proposal", "4️⃣"),
    ]
    assert run.of(Verdict)[0].reasoning == "Ada Quill revises twice."


def test_a_revision_prompt_shows_the_others_trimmed_and_ones_own_in_full() -> None:
    long = "word " * 200
    prompt = prompts.revision(
        question=QUESTION,
        round_no=1,
        rounds=2,
        own="My own plan " + long,
        others=[("Dario Vance", "Auction the kerb. " + long), ("Kit Nakamura", "Bike lanes.")],
        limit=100,
    )
    assert ("My own plan " + long).strip() in prompt
    assert "Dario Vance: “Auction the kerb. word" in prompt and long.strip() not in prompt.split("Dario")[1]
    assert "Kit Nakamura: “Bike lanes.”" in prompt and "Round 1 of 2" in prompt


# --- the strategies ----------------------------------------------------------------------------


async def test_majority_adopts_the_proposal_with_most_votes(tmp_path: Path) -> None:
    run = await council(tmp_path, ballot({"ada": "p4", "dario": "p4", "esme": "p1", "kit": "p4"}))
    assert {v.voter.id: v.choice for v in run.ai_votes("v1")} == {
        "ada": "p4",
        "dario": "p4",
        "esme": "p1",
        "kit": "p4",
    }
    closed = run.closed("v1")
    assert closed.tally == {"p1": 1, "p2": 0, "p3": 0, "p4": 3}
    assert closed.decision == "p4" and closed.decision_label == "Kit Nakamura's proposal wins"
    assert closed.tie_broken_by is None
    [verdict] = run.of(Verdict)
    assert (verdict.title, verdict.winner, verdict.winner_label) == (
        "Council decision",
        "p4",
        "Kit Nakamura's proposal",
    )
    assert verdict.reasoning == PROPOSALS["kit"] and verdict.by is None
    assert run.result.reason == "completed"
    assert "adopted Kit Nakamura's proposal by majority (3 of 4 votes)" in run.result.summary


async def test_a_weighted_vote_can_overturn_the_head_count(tmp_path: Path) -> None:
    votes = ballot({"ada": "p1", "dario": "p4", "esme": "p4", "kit": "abstain"})
    seats = weights(ada=2.5, dario=1.0, esme=1.0, kit=1.0)
    by_heads = await council(tmp_path, votes, config={"formats": seats})
    by_weight = await council(tmp_path, votes, strategy="weighted", config={"formats": seats})

    assert by_heads.closed("v1").decision == "p4"
    closed = by_weight.closed("v1")
    assert closed.tally == {"p1": 2.5, "p2": 0, "p3": 0, "p4": 2.0}
    assert closed.decision == "p1" and closed.decision_label == "Ada Quill's proposal wins"
    assert "Votes weighted by expertise: Ada Quill 2.5, Dario Vance 1" in closed.note
    assert "By head count, Kit Nakamura's proposal led." in closed.note
    assert "1 abstained (Kit Nakamura)." in closed.note
    assert "by expertise-weighted vote (2.5 of 5.5 weight)" in by_weight.result.summary


async def test_consensus_stops_revising_once_proposals_converge_and_a_unanimous_vote_decides(
    tmp_path: Path,
) -> None:
    agreed = "Charge cars entering the centre at peak hours and spend every cent on buses and bike lanes"
    revisions = {
        "ada": [f"{agreed}."],
        "dario": [f"{agreed}, starting next spring."],
        "esme": [f"{agreed}, exempting disabled drivers."],
        "kit": [f"I now agree: {agreed}."],
    }
    script = ballot({"ada": "p1", "dario": "p1", "esme": "p1", "kit": "p1"}, revisions)
    run = await council(tmp_path, script, rounds=3, strategy="consensus")

    assert {t.round for t in run.turns()} == {0, 1}  # rounds 2 and 3 were skipped
    [converged] = [n for n in run.of(Notice) if n.code == "converged"]
    assert converged.level == "info" and "converged after round 1" in converged.message
    closed = run.closed("v1")
    assert closed.decision == "p1" and closed.note == "Unanimous: the council reached consensus."
    assert "by consensus" in run.result.summary
    assert run.result.detail == "the council voted after 1 revision round, the proposals having converged"

    # the same revisions under majority: every round is played
    plain = await council(tmp_path, script, rounds=3)
    assert {t.round for t in plain.turns()} == {0, 1, 2, 3}
    assert not [n for n in plain.of(Notice) if n.code == "converged"]


async def test_consensus_without_a_unanimous_vote_falls_back_to_majority_and_says_so(tmp_path: Path) -> None:
    script = ballot({"ada": "p1", "dario": "p2", "esme": "p1", "kit": "p1"})
    run = await council(tmp_path, script, strategy="consensus")
    closed = run.closed("v1")
    assert closed.decision == "p1"
    assert closed.note.startswith("No consensus: fell back to majority.")
    assert "by majority (3 of 4 votes). No consensus: fell back to majority." in run.result.summary


async def test_the_moderator_picks_whatever_the_members_prefer(tmp_path: Path) -> None:
    script = {
        **ballot({"ada": "p1", "dario": "p1", "esme": "p3", "kit": "p1"}),
        "moderator": [{"choice": "p3", "reason": "It protects children first and costs least."}],
    }
    run = await council(tmp_path, script, strategy="moderator")

    cast = {m.persona.id: m.role for m in run.of(DebateStarted)[0].cast}
    assert cast["sol"] == "moderator"
    assert [v.id for v in run.of(VotingStarted)[0].voters][-1] == "sol"
    sol = next(v for v in run.ai_votes("v1") if v.voter.id == "sol")
    assert (sol.choice, sol.reason) == ("p3", "It protects children first and costs least.")
    closed = run.closed("v1")
    assert closed.tally == {"p1": 3, "p2": 0, "p3": 1, "p4": 0}  # the members' advice
    assert closed.decision == "p3" and "Sol Amari decides as moderator" in closed.note
    [verdict] = run.of(Verdict)
    assert verdict.by is not None and verdict.by.id == "sol" and verdict.reasoning == PROPOSALS["esme"]
    assert "on the choice of Sol Amari, the moderator" in run.result.summary


async def test_a_moderator_who_cannot_choose_leaves_it_to_the_majority(tmp_path: Path) -> None:
    script = {
        **ballot({"ada": "p1", "dario": "p1", "esme": "p3", "kit": "p1"}),
        "moderator": [{"error": "moderator offline"}],
    }
    run = await council(tmp_path, script, strategy="moderator")
    [notice] = [n for n in run.of(Notice) if n.code == "moderator_failed"]
    assert "Sol Amari could not choose (moderator offline)" in notice.message
    closed = run.closed("v1")
    assert closed.decision == "p1" and closed.note.startswith("The moderator could not decide")
    assert run.of(Verdict)[0].by is None


async def test_the_moderator_strategy_is_refused_without_a_moderator(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="needs a moderator"):
        await council(tmp_path, strategy="moderator", config={"formats": {"council": {"moderator": None}}})


async def test_unknown_options_and_bad_values_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="Unknown option 'duration'"):
        await council(tmp_path, duration=60)
    with pytest.raises(SpecError, match="strategy must be one of"):
        await council(tmp_path, strategy="loudest")
    with pytest.raises(SpecError, match="humans must be one of"):
        await council(tmp_path, humans="vote")
    with pytest.raises(SpecError, match="rounds must be at most 5"):
        await council(tmp_path, rounds=9)


# --- abstentions and ties ------------------------------------------------------------------------


async def test_an_abstention_counts_for_no_proposal_and_is_reported(tmp_path: Path) -> None:
    run = await council(tmp_path, ballot({"ada": "p2", "dario": "p2", "esme": "abstain", "kit": "p1"}))
    esme = next(v for v in run.ai_votes("v1") if v.voter.id == "esme")
    assert esme.choice == "abstain" and esme.reason == "esme chooses abstain" and not esme.defaulted
    closed = run.closed("v1")
    assert closed.tally == {"p1": 1, "p2": 2, "p3": 0, "p4": 0}
    assert closed.decision == "p2" and closed.note == "1 abstained (Esme Hart)."
    assert "1 abstained (Esme Hart)." in run.result.summary


async def test_a_tie_without_people_goes_to_the_earliest_proposal(tmp_path: Path) -> None:
    run = await council(tmp_path, ballot({"ada": "p4", "dario": "p2", "esme": "p2", "kit": "p4"}))
    closed = run.closed("v1")
    assert closed.tally == {"p1": 0, "p2": 2, "p3": 0, "p4": 2}
    assert closed.decision == "p2" and closed.tie_broken_by == "default"
    assert "Tie between the proposals of Dario Vance and Kit Nakamura: the earliest wins." in closed.note
    assert not run.of(HumanVoteOpened)


async def test_a_tie_waits_for_people_who_choose_among_the_tied_proposals(tmp_path: Path) -> None:
    windows: list[HumanVoteOpened] = []

    async def people(rt: object, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            windows.append(event)
            await handle.cast_human_vote(event.vote_id, "u1", "p4", voter_name="Ana")
            await handle.cast_human_vote(event.vote_id, "u2", "p4", voter_name="Bo")
            await handle.cast_human_vote(event.vote_id, "u3", "p2", voter_name="Cy")
            # Ada's proposal is not in the tie: the pick is refused or, at least, never counted
            with contextlib.suppress(InvalidChoiceError):
                for voter in ("u4", "u5", "u6"):
                    await handle.cast_human_vote(event.vote_id, voter, "p1")

    script = ballot({"ada": "p4", "dario": "p2", "esme": "p2", "kit": "p4"})
    run = await council(tmp_path, script, humans="tiebreak", hook=people)

    assert run.of(VotingStarted)[0].humans == "tiebreak"
    [opened] = windows
    assert opened.reason == "tie" and opened.window == 30
    assert [o.key for o in opened.options] == ["p2", "p4"]
    closed = run.closed("v1")
    assert closed.tally == {"p1": 0, "p2": 2, "p3": 0, "p4": 2}
    assert closed.human_tally == {"p2": 1, "p4": 2}
    assert closed.decision == "p4" and closed.tie_broken_by == "humans"
    assert "the people broke it (Dario Vance 1, Kit Nakamura 2)" in closed.note
    assert run.of(Verdict)[0].winner == "p4"
    # the window ran on the debate's clock before the vote closed
    assert run.result.stats.debate_seconds >= 30


async def test_people_who_leave_a_tie_tied_get_the_earliest_proposal(tmp_path: Path) -> None:
    script = ballot({"ada": "p4", "dario": "p2", "esme": "p2", "kit": "p4"})
    run = await council(tmp_path, script, humans="tiebreak")
    assert run.of(HumanVoteOpened)
    closed = run.closed("v1")
    assert closed.decision == "p2" and closed.tie_broken_by == "default"
    assert "the people left it tied, so the earliest wins" in closed.note


# --- failures ------------------------------------------------------------------------------------


async def test_a_vote_that_fails_or_cannot_be_read_is_an_abstention_with_a_notice(tmp_path: Path) -> None:
    votes: dict[str, str | dict[str, Any]] = {
        "ada": {"error": "voter offline"},
        "dario": "p4",
        "esme": {"say": "I would rather not pick one."},
        "kit": "p4",
    }
    run = await council(tmp_path, ballot(votes))
    cast = {v.voter.id: v for v in run.ai_votes("v1")}
    assert cast["ada"].choice == "abstain" and cast["ada"].defaulted
    assert cast["esme"].choice == "abstain" and cast["esme"].defaulted
    notices = {n.code: n.message for n in run.of(Notice)}
    assert notices["vote_failed"] == "Ada Quill could not vote (voter offline); counted as an abstention."
    assert "Esme Hart" in notices["vote_unreadable"] and "rather not pick one" in notices["vote_unreadable"]
    closed = run.closed("v1")
    assert closed.decision == "p4" and closed.note == "2 abstained (Ada Quill and Esme Hart)."
    assert run.result.reason == "completed"


async def test_a_member_whose_proposal_fails_twice_gets_a_fallback_and_is_off_the_ballot(
    tmp_path: Path,
) -> None:
    # with Esme off the ballot, p3 is Kit's proposal
    script = ballot({"ada": "p1", "dario": "p1", "esme": "p3", "kit": "p3"})
    script["persona:esme:council"] = [
        {"error": "reply cut off"},
        {"error": "reply cut off again"},
        {"choice": "p3", "reason": "r"},
    ]
    run = await council(tmp_path, script)
    esme_turn = next(t for t in run.turns() if t.speaker.id == "esme")
    assert esme_turn.fallback and "Esme Hart" in esme_turn.text
    [failed] = [n for n in run.of(Notice) if n.code == "turn_failed"]
    assert "reply cut off again" in failed.message
    options = run.of(VotingStarted)[0].options
    assert [o.label for o in options] == [
        "Ada Quill's proposal",
        "Dario Vance's proposal",
        "Kit Nakamura's proposal",
    ]
    assert "esme" in {v.voter.id for v in run.ai_votes("v1")}  # still votes
    closed = run.closed("v1")
    assert closed.tally == {"p1": 2, "p2": 0, "p3": 2}
    assert closed.decision == "p1"


async def test_a_failed_revision_leaves_the_previous_proposal_standing(tmp_path: Path) -> None:
    revisions: dict[str, list[Any]] = {
        "ada": ["Ada revises."],
        "dario": ["Dario revises."],
        "esme": ["Esme revises."],
        "kit": [{"error": "down"}, {"error": "still down"}],
    }
    run = await council(
        tmp_path, ballot({"ada": "p4", "dario": "p4", "esme": "p4", "kit": "p4"}, revisions), rounds=1
    )
    assert run.of(Verdict)[0].reasoning == PROPOSALS["kit"]


async def test_a_spent_token_budget_ends_the_council_before_more_calls(tmp_path: Path) -> None:
    run = await council(tmp_path, rounds=2, config={"limits": {"max_tokens_per_debate": 1000}})
    assert run.result.reason == "budget"
    assert run.turns() == []  # four proposals at once cannot all be covered: none is asked for
    assert run.result.stats.tokens.total == 0
    assert not run.of(VotingStarted)
    assert run.result.summary.startswith("No decision: the token budget of 1,000 was spent after round 0")


# --- rehearsal and the terminal --------------------------------------------------------------------


async def test_rehearsal_votes_always_name_a_real_option(tmp_path: Path) -> None:
    for seed in range(4):
        run = await run_debate(
            tmp_path / str(seed), fmt="council", seed=seed, options={"rounds": 1, "humans": "off"}
        )
        choices = {v.choice for v in run.of(VoteCast)}
        assert choices <= {"p1", "p2", "p3", "p4", "abstain"}
        assert not [n for n in run.of(Notice) if n.level != "info"]
        assert run.of(Verdict)[0].winner in {"p1", "p2", "p3", "p4"}


async def test_a_council_reads_well_in_the_terminal(tmp_path: Path) -> None:
    async def people(rt: object, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            await handle.cast_human_vote(event.vote_id, "u1", "p3", voter_name="Ana")

    # Esme's proposal fails twice, so the ballot is p1 Ada, p2 Dario, p3 Kit.
    script = {
        "persona:ada:council": [PROPOSALS["ada"], {"choice": "p3", "reason": "Lanes last longest."}],
        "persona:dario:council": [PROPOSALS["dario"], {"choice": "p2", "reason": "Prices beat bans."}],
        "persona:esme:council": [
            {"error": "down"},
            {"error": "still down"},
            {"choice": "abstain", "reason": "Torn."},
        ],
        "persona:kit:council": [PROPOSALS["kit"], {"say": "Pass."}],
    }
    run = await council(tmp_path, script, humans="tiebreak", hook=people)
    kinds = {e.kind for e in run.sink.events}
    assert kinds == {
        "debate_started",
        "phase_changed",
        "turn_started",
        "turn_completed",
        "notice",
        "voting_started",
        "vote_cast",
        "human_vote_opened",
        "voting_closed",
        "verdict",
        "debate_completed",
    }

    text = render(run.sink.events)
    assert "Rostra · council" in text and QUESTION in text
    assert f"🧮 Ada Quill  Round 0 · proposal\n{PROPOSALS['ada']}" in text
    assert "lost the thread for a moment" in text and "⚠  Esme Hart's turn failed twice (still down)" in text
    assert "🗳  Which proposal should the council adopt?" in text
    assert "📈 Dario Vance → 2️⃣ Dario Vance's proposal  Prices beat bans." in text
    assert "⚖️ Esme Hart → abstain  Torn." in text
    assert "⚠  Kit Nakamura's vote could not be read and counts as an abstention: “Pass.”" in text
    assert (
        "It's a tie: people have 30 s to vote (2️⃣ Dario Vance's proposal / 3️⃣ Kit Nakamura's proposal)" in text
    )
    assert "👤 Ana → 3️⃣ Kit Nakamura's proposal" in text
    assert "Kit Nakamura's proposal wins" in text and "2 abstained (Esme Hart and Kit Nakamura)." in text
    assert "Council decision" in text and PROPOSALS["kit"] in text
    assert text.index("Round 0 · proposal") < text.index("🗳") < text.index("Council decision")
    assert "Ended: the council voted after 0 revision rounds" in text


# --- convergence -----------------------------------------------------------------------------------


def test_similarity_is_the_overlap_of_content_words() -> None:
    assert similarity("Build bike lanes now.", "build BIKE lanes now") == 1.0
    assert similarity("The plan is a charge.", "A plan: charge!") == 1.0  # small words do not count
    assert similarity("bike lanes", "parking prices") == 0.0
    assert similarity("bike lanes downtown", "bike lanes uptown") == pytest.approx(2 / 4)


def test_closeness_is_the_least_similar_pair() -> None:
    assert closeness(["bike lanes", "bike lanes", "bike lanes now"]) == pytest.approx(2 / 3)
    assert closeness(["bike lanes", "bike lanes", "parking prices"]) == 0.0
    assert closeness(["only one proposal"]) == 0.0
