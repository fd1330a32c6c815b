"""Prompts stay bounded: recent turns verbatim, older ones as a capped digest."""

from __future__ import annotations

from pathlib import Path

from core.context import ContextBuilder, first_sentence, trim
from core.events import TurnCompleted
from core.llm.caching import cache_blocks
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
        tmp_path,
        options={"exchanges_per_round": 3, "duration": 7200, "rounds": 8},
        model={"latency": 0},
        context={"strategy": "bounded"},
    )
    spoken = [t for t in run.of(TurnCompleted) if t.role != "moderator"]
    assert len(spoken) == 48
    early = max(t.usage.input_tokens for t in spoken[6:12])
    late = max(t.usage.input_tokens for t in spoken[40:])
    assert late <= early * 1.15


async def test_the_transcript_strategy_is_capped_by_its_folds(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path,
        options={"exchanges_per_round": 3, "duration": 7200, "rounds": 8},
        model={"latency": 0},
        context={"strategy": "transcript", "window": 16},
    )
    spoken = [t for t in run.of(TurnCompleted) if t.role != "moderator"]
    assert len(spoken) == 48
    first_window = max(t.usage.input_tokens for t in spoken[:20])
    later = max(t.usage.input_tokens for t in spoken[20:])
    assert later <= first_window * 1.25  # a fold brings it back down; it does not grow with the debate


def test_the_transcript_is_append_only_between_folds_and_never_less_than_the_bounded_view() -> None:
    settings = ContextSettings(strategy="transcript", window=8, recent_turns=4)
    builder = ContextBuilder(settings)
    bounded = ContextBuilder(ContextSettings(recent_turns=4))
    previous = ""
    for n in range(1, 30):
        turns = [turn(i) for i in range(n)]
        text = builder.build(turns).render()
        # every turn the bounded view shows verbatim is verbatim here too
        for line in bounded.build(turns).recent.split("\n\n"):
            assert line in text
        folded = n > 4 and (n - 4) % 8 == 0
        if previous and not folded:
            assert text.startswith(previous.removesuffix("No one has spoken yet."))
        previous = text
    assert "Earlier in the debate (digest):" in previous and "Turn by turn, in order:" in previous


def test_cache_blocks_split_at_turn_boundaries_and_rejoin_to_the_prompt() -> None:
    builder = ContextBuilder(ContextSettings(strategy="transcript", window=8))
    prompt = builder.build([turn(i) for i in range(14)]).render() + "\n\nRound 3. Your turn."
    blocks = cache_blocks(prompt)
    assert blocks is not None
    assert "".join(b["text"] for b in blocks) == prompt
    marked = [b for b in blocks if "cache_control" in b]
    assert len(marked) == 1 and blocks[-2] is marked[0] and blocks[-1]["text"] == "Round 3. Your turn."
    assert blocks[0]["text"].startswith("Earlier in the debate (digest):")
    assert cache_blocks("Recent exchanges: [Ada] hello") is None
