"""Streamed turns: interim text coalesced by size and by time, the same text in the end, stored first."""

from __future__ import annotations

from pathlib import Path

from core.events import TurnCompleted, TurnDelta
from core.turns import DELTA_INTERVAL, DELTA_MAX_CHARS
from tests.core.runs import Run, run_debate

ONE_EXCHANGE = {"rounds": 1, "exchanges_per_round": 1, "first_speaker": "ada"}
# Sixty words: 20 chunks of three words on the scripted model.
SIXTY = " ".join(f"word{i}" for i in range(60))


def _pieces(run: Run, turn: TurnCompleted) -> list[str]:
    return [d.text for d in run.of(TurnDelta) if d.turn_id == turn.turn_id]


async def test_a_slow_stream_arrives_in_pieces_about_an_interval_apart(tmp_path: Path) -> None:
    latency = 0.1  # 20 chunks: two seconds on the debate's clock
    run = await run_debate(
        tmp_path, script={"proposition": [SIXTY]}, options=ONE_EXCHANGE, model={"latency": latency}
    )
    opening = run.turns("proposition")[0]
    pieces = _pieces(run, opening)
    assert "".join(pieces).strip() == opening.text == SIXTY  # the same text, nothing lost
    # the first words go out at once, then at most one piece per interval, then the rest at the end
    most = 1 + int(20 * latency / DELTA_INTERVAL) + 1
    assert 3 <= len(pieces) <= most, pieces
    assert pieces[0] == "word0 word1 word2 word3 word4 word5 "  # first piece: a few words, no waiting
    # every event was stored, in order, before the front end saw it
    assert [e.seq for e in run.sink.events] == [e.seq for e in run.stored]


async def test_a_stream_that_takes_no_time_still_arrives_in_bounded_pieces(tmp_path: Path) -> None:
    long = " ".join(f"w{i:03d}" for i in range(300))  # 1,500 characters, no time between chunks
    run = await run_debate(
        tmp_path, script={"proposition": [long]}, options=ONE_EXCHANGE, model={"latency": 0.0}
    )
    opening = run.turns("proposition")[0]
    pieces = _pieces(run, opening)
    assert "".join(pieces).strip() == long
    assert len(pieces) >= 1500 // (DELTA_MAX_CHARS + 20)
    assert all(len(p) < DELTA_MAX_CHARS + 20 for p in pieces)
