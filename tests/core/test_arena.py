"""The arena's rules, each shown by a whole debate through the real runtime (fake clock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import BallotClosedError, InvalidChoiceError, SpecError
from core.events import (
    ClockTick,
    DebateCompleted,
    DebateStarted,
    Event,
    HumanVoteOpened,
    Notice,
    SpeakerSwitched,
    TurnDelta,
    TurnStarted,
    VoteCast,
    VotingStarted,
)
from core.session import DebateHandle
from tests.core.runs import run_debate

POOL = ["ada", "basil", "celeste", "dario", "esme"]
OBSERVERS_OF_ADA = ["basil", "celeste", "dario", "esme"]


def votes(**choices: str) -> dict[str, list[dict[str, str]]]:
    """A script giving each named observer a fixed vote (only when observing)."""
    return {
        f"persona:{pid}:observer": [{"vote": choice, "reason": f"{pid} says {choice}"}]
        for pid, choice in choices.items()
    }


# Two rounds with one vote between them (no vote follows the last round).
ONE_VOTE = {"rounds": 2, "exchanges_per_round": 1, "first_speaker": "ada"}


async def test_turns_alternate_for_and_against_and_a_vote_follows_each_round_but_the_last(
    tmp_path: Path,
) -> None:
    run = await run_debate(tmp_path, options={"rounds": 3, "exchanges_per_round": 3, "first_speaker": "ada"})
    spoken = [t.role for t in run.turns() if t.role != "moderator"]
    assert spoken == ["proposition", "opposition"] * 9
    kinds = [e.kind for e in run.sink.events if e.kind in ("turn_completed", "voting_started")]
    assert kinds[6] == "voting_started" and kinds[13] == "voting_started"
    assert kinds.count("voting_started") == 2  # after rounds 1 and 2; the last round ends the debate
    assert kinds[-2:] == ["turn_completed", "turn_completed"]  # the last exchange, then the summary
    assert run.result.reason == "max_rounds"


async def test_first_speaker_is_random_from_the_pool_but_fixed_by_the_seed(tmp_path: Path) -> None:
    firsts = set()
    for seed in range(6):
        run = await run_debate(
            tmp_path / str(seed), seed=seed, options={"rounds": 1, "exchanges_per_round": 1}
        )
        started = run.of(DebateStarted)[0]
        first = started.settings["first_speaker"]
        assert first in POOL
        assert run.turns("proposition")[0].speaker.id == first
        firsts.add(first)
    again = await run_debate(tmp_path / "again", seed=3, options={"rounds": 1, "exchanges_per_round": 1})
    third = await run_debate(tmp_path / "third", seed=3, options={"rounds": 1, "exchanges_per_round": 1})
    assert again.of(DebateStarted)[0].settings == third.of(DebateStarted)[0].settings
    assert len(firsts) > 1


async def test_cast_has_one_proposition_speaker_observers_opposition_and_moderator(tmp_path: Path) -> None:
    run = await run_debate(tmp_path, options=ONE_VOTE)
    roles = {m.persona.id: m.role for m in run.of(DebateStarted)[0].cast}
    assert roles == {
        "ada": "proposition",
        "basil": "observer",
        "celeste": "observer",
        "dario": "observer",
        "esme": "observer",
        "vera": "opposition",
        "sol": "moderator",
    }


async def test_observers_vote_with_reasons_on_the_active_speaker(tmp_path: Path) -> None:
    script = votes(basil="keep", celeste="keep", dario="replace", esme="keep")
    run = await run_debate(tmp_path, script=script, options=ONE_VOTE)
    started = run.of(VotingStarted)[0]
    assert started.subject is not None and started.subject.id == "ada"
    assert [v.id for v in started.voters] == OBSERVERS_OF_ADA
    cast = {v.voter.id: (v.choice, v.reason) for v in run.ai_votes("v1")}
    assert cast == {
        "basil": ("keep", "basil says keep"),
        "celeste": ("keep", "celeste says keep"),
        "dario": ("replace", "dario says replace"),
        "esme": ("keep", "esme says keep"),
    }
    closed = run.closed("v1")
    assert closed.tally == {"keep": 3, "replace": 1} and closed.decision == "keep"
    assert not run.of(SpeakerSwitched)


async def test_observers_vote_in_parallel(tmp_path: Path) -> None:
    slow = {"vote": "keep", "reason": "slow but sure", "delay": 10}
    script = {f"persona:{pid}:observer": [slow] for pid in OBSERVERS_OF_ADA}
    run = await run_debate(tmp_path, script=script, options=ONE_VOTE, model={"latency": 0})
    # four voters each taking 10 s: in parallel the vote pauses the clock ~10 s, not 40 s
    assert 10 <= run.result.stats.paused_seconds < 20


async def test_strict_majority_replaces_the_speaker_with_another_pool_persona(tmp_path: Path) -> None:
    script = votes(basil="replace", celeste="replace", dario="replace", esme="keep")
    run = await run_debate(tmp_path, script=script, options={**ONE_VOTE, "rounds": 3})
    [switch, *_] = run.of(SpeakerSwitched)
    assert switch.old.id == "ada" and switch.new.id in OBSERVERS_OF_ADA
    assert switch.reason == "voted off 3–1 by the observers' majority"
    round_two = [t for t in run.turns("proposition") if t.round == 2]
    assert round_two and all(t.speaker.id == switch.new.id for t in round_two)
    second_vote = run.of(VotingStarted)[1]
    assert "ada" in [v.id for v in second_vote.voters]  # the old speaker now observes
    assert switch.new.id not in [v.id for v in second_vote.voters]


async def test_every_observer_voting_replace_switches_every_round(tmp_path: Path) -> None:
    script = {"observer": [{"vote": "replace", "reason": "time for a change"}]}
    run = await run_debate(tmp_path, script=script, options={"rounds": 4, "exchanges_per_round": 1})
    switches = run.of(SpeakerSwitched)
    assert len(switches) == 3  # after rounds 1-3; none after the last
    for switch in switches:
        assert switch.new.id != switch.old.id and switch.new.id in POOL
    assert [s.old.id for s in switches[1:]] == [s.new.id for s in switches[:-1]]


async def test_a_tie_without_people_keeps_the_speaker(tmp_path: Path) -> None:
    script = votes(basil="replace", celeste="replace", dario="keep", esme="keep")
    run = await run_debate(tmp_path, script=script, options=ONE_VOTE)
    closed = run.closed("v1")
    assert closed.decision == "keep" and closed.tie_broken_by == "default"
    assert not run.of(HumanVoteOpened) and not run.of(SpeakerSwitched)


async def test_a_tie_goes_to_the_people_and_their_choice_decides(tmp_path: Path) -> None:
    async def people_vote_replace(rt: object, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            await handle.cast_human_vote(event.vote_id, "u1", "replace", voter_name="Ana")
            await handle.cast_human_vote(event.vote_id, "u2", "replace", voter_name="Bo")
            await handle.cast_human_vote(event.vote_id, "u3", "keep", voter_name="Cy")

    script = votes(basil="replace", celeste="replace", dario="keep", esme="keep")
    run = await run_debate(
        tmp_path, script=script, options={**ONE_VOTE, "humans": "tiebreak"}, hook=people_vote_replace
    )
    [opened] = run.of(HumanVoteOpened)
    assert opened.reason == "tie" and opened.window == 30
    closed = run.closed("v1")
    assert closed.tally == {"keep": 2, "replace": 2}
    assert closed.human_tally == {"keep": 1, "replace": 2}
    assert closed.decision == "replace" and closed.tie_broken_by == "humans"
    [switch] = run.of(SpeakerSwitched)
    assert switch.old.id == "ada"
    # the people decided, and the line says so with their figures (not "voted off 2–2")
    assert switch.reason == "the people broke a 2–2 tie of the observers, voting 2–1 to replace"
    assert run.result.stats.human_votes == 3
    # the closing figures say so too
    assert run.result.stats.switches == 1 and run.result.stats.switches_by_people == 1
    assert run.result.stats.switch_deciders() == " (1 by the people)"


async def test_in_tiebreak_mode_people_are_asked_only_after_a_tie(tmp_path: Path) -> None:
    script = votes(basil="replace", celeste="replace", dario="replace", esme="keep")
    run = await run_debate(tmp_path, script=script, options={**ONE_VOTE, "humans": "tiebreak"})
    assert not run.of(HumanVoteOpened)
    assert run.closed("v1").decision == "replace"
    assert run.result.stats.switches == 1 and run.result.stats.switches_by_people == 0
    assert run.result.stats.switch_deciders() == " (1 by the observers' majority)"


async def test_a_person_changing_their_vote_counts_once_and_withdrawing_removes_it(tmp_path: Path) -> None:
    async def fickle(rt: object, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            await handle.cast_human_vote(event.vote_id, "u1", "keep")
            await handle.cast_human_vote(event.vote_id, "u1", "replace")  # replaces the first
            await handle.cast_human_vote(event.vote_id, "u2", "keep")
            await handle.withdraw_human_vote(event.vote_id, "u2")  # takes it back

    script = votes(basil="replace", celeste="replace", dario="keep", esme="keep")
    run = await run_debate(tmp_path, script=script, options={**ONE_VOTE, "humans": "tiebreak"}, hook=fickle)
    closed = run.closed("v1")
    assert closed.human_tally == {"keep": 0, "replace": 1}
    assert closed.decision == "replace"


async def test_a_people_tie_or_silence_leaves_the_speaker(tmp_path: Path) -> None:
    script = votes(basil="replace", celeste="replace", dario="keep", esme="keep")
    run = await run_debate(tmp_path, script=script, options={**ONE_VOTE, "humans": "tiebreak"})
    assert run.of(HumanVoteOpened)
    closed = run.closed("v1")
    assert closed.decision == "keep" and closed.tie_broken_by == "default"


async def test_in_vote_mode_the_people_majority_counts_as_one_more_voter(tmp_path: Path) -> None:
    async def crowd(rt: object, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            assert event.reason == "vote"
            for i in range(3):
                await handle.cast_human_vote(event.vote_id, f"u{i}", "replace")

    script = votes(basil="replace", celeste="replace", dario="keep", esme="keep")
    run = await run_debate(tmp_path, script=script, options={**ONE_VOTE, "humans": "vote"}, hook=crowd)
    closed = run.closed("v1")
    assert closed.tally == {"keep": 2, "replace": 3}  # three people, one extra vote
    assert closed.decision == "replace" and closed.tie_broken_by is None


async def test_votes_are_refused_outside_the_window_and_for_unknown_choices(tmp_path: Path) -> None:
    refusals: list[str] = []

    async def probe(rt: object, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, VotingStarted):
            with pytest.raises(BallotClosedError):
                await handle.cast_human_vote(event.vote_id, "u1", "keep")
            refusals.append("closed")
        if isinstance(event, HumanVoteOpened):
            with pytest.raises(InvalidChoiceError):
                await handle.cast_human_vote(event.vote_id, "u1", "maybe")
            refusals.append("invalid")

    script = votes(basil="replace", celeste="replace", dario="keep", esme="keep")
    await run_debate(tmp_path, script=script, options={**ONE_VOTE, "humans": "tiebreak"}, hook=probe)
    assert refusals == ["closed", "invalid"]


async def test_the_clock_is_paused_while_observers_vote(tmp_path: Path) -> None:
    slow = {"vote": "keep", "reason": "considered", "delay": 25}
    script = {"observer": [slow]}
    run = await run_debate(
        tmp_path,
        script=script,
        options={"rounds": 3, "exchanges_per_round": 1, "duration": 600},
        model={"latency": 0.5},
    )
    ticks = run.of(ClockTick)
    paused = [t for t in ticks if t.paused]
    assert paused, "the vote should pause the clock"
    # the elapsed debate time does not move while the clock is paused for the vote
    first_pause = ticks.index(paused[0])
    resumed = next(t for t in ticks[first_pause:] if not t.paused)
    assert resumed.elapsed == pytest.approx(paused[0].elapsed)
    stats = run.result.stats
    assert stats.paused_seconds >= 50  # two votes of ~25 s each
    assert stats.debate_seconds < 60  # ...which do not count as debate time


async def test_time_running_out_mid_round_finishes_the_turn_and_skips_the_vote(tmp_path: Path) -> None:
    script = {
        "proposition": [{"say": "For, slowly.", "delay": 7}],
        "opposition": [{"say": "Against, slowly.", "delay": 7}],
    }
    run = await run_debate(
        tmp_path,
        script=script,
        model={"latency": 0},
        options={"duration": 30, "exchanges_per_round": 3, "first_speaker": "ada"},
    )
    # turns start at 0, 7, 14, 21, 28 s: the fifth starts before 30 s and still finishes
    assert [t.role for t in run.turns()] == [
        "proposition",
        "opposition",
        "proposition",
        "opposition",
        "proposition",
        "moderator",
    ]
    assert not run.of(VotingStarted)
    assert run.result.reason == "time_up"
    assert run.result.stats.debate_seconds == pytest.approx(35, abs=0.5)


async def test_a_vote_does_not_start_once_time_is_up(tmp_path: Path) -> None:
    script = {
        "proposition": [{"say": "For.", "delay": 8}],
        "opposition": [{"say": "Against.", "delay": 8}],
    }
    run = await run_debate(
        tmp_path,
        script=script,
        model={"latency": 0},
        options={"duration": 30, "exchanges_per_round": 2, "first_speaker": "ada"},
    )
    # four turns end exactly at 32 s, when the round's vote would start: it must not
    assert len(run.turns("proposition")) == 2 and len(run.turns("opposition")) == 2
    assert not run.of(VotingStarted)
    assert run.result.reason == "time_up"


async def test_the_moderator_summary_is_streamed_and_closes_the_debate(tmp_path: Path) -> None:
    summary = "Both sides argued well. The proposition pressed on cost; the opposition on fairness."
    run = await run_debate(tmp_path, script={"moderator": [summary]}, options=ONE_VOTE)
    [moderator] = run.turns("moderator")
    assert moderator.speaker.id == "sol" and moderator.text == summary
    deltas = [d.text for d in run.of(TurnDelta) if d.turn_id == moderator.turn_id]
    assert len(deltas) > 1 and "".join(deltas).strip() == summary
    [done] = run.of(DebateCompleted)
    assert done.summary == summary and run.sink.events[-1] is done


async def test_statistics_count_turns_words_votes_and_switches(tmp_path: Path) -> None:
    script = {
        "proposition": ["one two three four"],
        "opposition": ["five six"],
        "moderator": ["The end."],
        **votes(basil="replace", celeste="replace", dario="replace", esme="keep"),
    }
    run = await run_debate(tmp_path, script=script, options={**ONE_VOTE, "exchanges_per_round": 2})
    stats = run.result.stats
    per = {p.persona.id: p for p in stats.per_persona}
    assert (per["ada"].turns, per["ada"].words) == (2, 8)
    assert (per["vera"].turns, per["vera"].words) == (4, 8)
    assert (per["ada"].judged, per["ada"].votes_keep, per["ada"].votes_replace) == (1, 1, 3)
    assert stats.switches == 1 and stats.votes == 4 and stats.rounds == 2  # no vote after round 2
    assert stats.turns == 9  # eight spoken turns and the summary
    assert stats.tokens.total > 0


async def test_a_failed_turn_is_retried_once_and_the_retry_replaces_the_partial(tmp_path: Path) -> None:
    script = {"proposition": [{"error": "reply cut off"}, "Recovered and arguing for."]}
    run = await run_debate(tmp_path, script=script, options=ONE_VOTE)
    first = run.turns("proposition")[0]
    starts = [s for s in run.of(TurnStarted) if s.turn_id == first.turn_id]
    assert [s.attempt for s in starts] == [1, 2]
    assert first.text == "Recovered and arguing for." and not first.fallback
    assert not [n for n in run.of(Notice) if n.code == "turn_failed"]


async def test_a_turn_failing_twice_gets_a_fallback_line_and_a_notice(tmp_path: Path) -> None:
    script = {"proposition": [{"error": "reply cut off"}, {"error": "reply cut off again"}, "Back."]}
    run = await run_debate(tmp_path, script=script, options={**ONE_VOTE, "exchanges_per_round": 2})
    first, second, *_ = run.turns("proposition")
    assert first.fallback and "Ada Quill" in first.text and "yields the floor" in first.text
    [notice] = [n for n in run.of(Notice) if n.code == "turn_failed"]
    assert "Ada Quill" in notice.message and "reply cut off again" in notice.message
    assert second.text == "Back." and not second.fallback
    assert run.result.reason == "max_rounds"  # the debate carried on


async def test_an_observer_that_fails_counts_as_keep(tmp_path: Path) -> None:
    script = {
        "persona:basil:observer": [{"error": "voter offline"}],
        **votes(celeste="replace", dario="replace", esme="keep"),
    }
    run = await run_debate(tmp_path, script=script, options=ONE_VOTE)
    basil = next(v for v in run.ai_votes("v1") if v.voter.id == "basil")
    assert basil.choice == "keep" and basil.defaulted
    assert any(n.code == "vote_failed" and "Basil Thorne" in n.message for n in run.of(Notice))
    closed = run.closed("v1")
    assert closed.tally == {"keep": 2, "replace": 2} and closed.decision == "keep"


async def test_an_unreadable_vote_is_dropped_and_reported(tmp_path: Path) -> None:
    script = {
        "persona:basil:observer": ["I decline to answer in the requested format."],
        **votes(celeste="replace", dario="replace", esme="keep"),
    }
    run = await run_debate(tmp_path, script=script, options=ONE_VOTE)
    assert "basil" not in {v.voter.id for v in run.ai_votes("v1")}
    [dropped] = [n for n in run.of(Notice) if n.code == "vote_dropped"]
    assert "Basil Thorne" in dropped.message and "decline" in dropped.message
    closed = run.closed("v1")
    assert closed.tally == {"keep": 1, "replace": 2} and closed.decision == "replace"


async def test_the_round_cap_ends_any_debate(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path, options={"exchanges_per_round": 1, "duration": 7200}, limits={"max_rounds": 2}
    )
    assert len(run.of(VotingStarted)) == 1  # after round 1; none after the last
    assert run.result.stats.rounds == 2
    assert run.result.reason == "max_rounds"


@pytest.mark.parametrize("rounds", [1, 2, 3])
async def test_no_vote_follows_the_last_round_so_whoever_is_voted_in_speaks(
    tmp_path: Path, rounds: int
) -> None:
    """N rounds hold N-1 votes: after the last round nobody is judged, no window opens for the
    people and nobody "takes the floor" without ever speaking."""
    script = {"observer": [{"vote": "replace", "reason": "time for a change"}]}
    run = await run_debate(
        tmp_path, script=script, options={"rounds": rounds, "exchanges_per_round": 1, "humans": "vote"}
    )
    assert run.result.reason == "max_rounds"
    assert len(run.of(VotingStarted)) == rounds - 1
    assert len(run.of(HumanVoteOpened)) == rounds - 1
    last_turn = max(e.seq for e in run.of(TurnStarted) if e.role != "moderator")
    assert not [e for e in [*run.of(VotingStarted), *run.of(HumanVoteOpened)] if e.seq > last_turn]
    proposition_speakers = {t.speaker.id for t in run.turns("proposition")}
    switches = run.of(SpeakerSwitched)
    assert len(switches) == rounds - 1
    assert all(s.new.id in proposition_speakers for s in switches)  # every new speaker spoke
    assert run.result.stats.rounds == rounds


@pytest.mark.slow
async def test_a_budget_never_leaves_a_voted_in_speaker_without_a_turn(tmp_path: Path) -> None:
    """A vote is held only when the budget also covers the turn of whoever it puts on the floor.
    Votes that use their whole allowance (long reasons) leave little over: with some budgets the
    new speaker's turn would not fit after the vote."""
    script = {"observer": [{"vote": "replace", "reason": "time for a change " * 60}]}
    for budget in range(4000, 9001, 50):
        (tmp_path / str(budget)).mkdir()
        run = await run_debate(
            tmp_path / str(budget),
            script=script,
            options={"rounds": 10, "exchanges_per_round": 1, "first_speaker": "ada"},
            limits={"max_tokens_per_debate": budget},
        )
        assert run.result.reason == "budget", budget
        spoken = [(t.seq, t.speaker.id) for t in run.turns("proposition") if not t.fallback]
        for switch in run.of(SpeakerSwitched):
            assert any(seq > switch.seq and who == switch.new.id for seq, who in spoken), (budget, switch)


async def test_asking_for_more_rounds_than_the_cap_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="rounds must be at most 2"):
        await run_debate(tmp_path, options={"rounds": 3}, limits={"max_rounds": 2})


async def test_a_spent_token_budget_ends_the_debate_cleanly_without_more_calls(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path, options={"exchanges_per_round": 3}, limits={"max_tokens_per_debate": 1500}
    )
    assert run.result.reason == "budget"
    assert not run.turns("moderator")  # no model call for the summary once the budget is gone
    assert "token budget" in run.result.summary
    spent_at = run.result.stats.tokens.total
    assert 0 < spent_at <= 1500  # a hard ceiling: no call is made that the rest cannot cover


async def test_unknown_options_and_bad_values_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="Unknown option 'speed'"):
        await run_debate(tmp_path, options={"speed": 3})
    with pytest.raises(SpecError, match="duration must be at least 30"):
        await run_debate(tmp_path, options={"duration": 5})
    with pytest.raises(SpecError, match="humans must be one of"):
        await run_debate(tmp_path, options={"humans": "sometimes"})
    with pytest.raises(SpecError, match="not in the proposition pool"):
        await run_debate(tmp_path, options={"first_speaker": "vera"})


async def test_rehearsal_text_is_labelled_and_votes_are_seeded(tmp_path: Path) -> None:
    a = await run_debate(tmp_path / "a", seed=11, options={"rounds": 2, "exchanges_per_round": 1})
    b = await run_debate(tmp_path / "b", seed=11, options={"rounds": 2, "exchanges_per_round": 1})
    assert all(t.text.startswith("[rehearsal]") for t in a.turns())
    assert [t.text for t in a.turns()] == [t.text for t in b.turns()]
    assert [(v.voter.id, v.choice) for v in a.of(VoteCast)] == [
        (v.voter.id, v.choice) for v in b.of(VoteCast)
    ]
