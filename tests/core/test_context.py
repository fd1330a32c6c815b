"""Prompts stay bounded: recent turns verbatim, older ones as a capped digest."""

from __future__ import annotations

from pathlib import Path

from core.context import ContextBuilder, first_sentence, trim
from core.events import TurnCompleted
from core.models import PersonaRef, TokenUsage
from core.settings import ContextSettings
from core.state import TurnRecord
from tests.core.runs import run_debate

ADA = PersonaRef(id="ada", name="Ada", emoji="🧮")


def turn(i: int) -> TurnRecord:
    text = f"Point number {i} is decisive. " + "Supporting detail follows here. " * 20
    return TurnRecord(f"t{i}", ADA, "proposition", 1 + i // 6, text, TokenUsage())


def test_recent_turns_are_verbatim_and_older_ones_are_digested() -> None:
    builder = ContextBuilder(ContextSettings(recent_turns=2, digest_lines=3))
    ctx = builder.build([turn(i) for i in range(6)])
    assert "Point number 5" in ctx.recent and "Point number 4" in ctx.recent
    assert "Point number 3" not in ctx.recent
    assert ctx.digest.splitlines() == [
        "(1 earlier turns not shown)",
        "- R1 Ada (proposition): Point number 1 is decisive.",
        "- R1 Ada (proposition): Point number 2 is decisive.",
        "- R1 Ada (proposition): Point number 3 is decisive.",
    ]


def test_the_context_does_not_grow_with_the_transcript() -> None:
    builder = ContextBuilder(ContextSettings())
    early = len(builder.build([turn(i) for i in range(15)]).render())
    late = len(builder.build([turn(i) for i in range(500)]).render())
    assert late <= early + 40  # only the "N earlier turns" counter grows


def test_trim_and_first_sentence() -> None:
    assert trim("a  b\n c", 10) == "a b c"
    assert trim("word " * 40, 20).endswith("…") and len(trim("word " * 40, 20)) <= 20
    assert first_sentence("One. Two! Three?") == "One."


async def test_input_tokens_per_turn_stay_flat_in_a_long_debate(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path, options={"exchanges_per_round": 3, "duration": 7200, "rounds": 8}, model={"latency": 0}
    )
    spoken = [t for t in run.of(TurnCompleted) if t.role != "moderator"]
    assert len(spoken) == 48
    early = max(t.usage.input_tokens for t in spoken[6:12])
    late = max(t.usage.input_tokens for t in spoken[40:])
    assert late <= early * 1.15
