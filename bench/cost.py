"""Benchmark, run by hand: `.venv/bin/python bench/cost.py`. Results go in docs/benchmarks.md.

Tokens per turn and cost per debate for the two context strategies (`context.strategy`):
`bounded` (recent turns verbatim plus a digest) against `transcript` (the append-only transcript,
cached). Each debate is a real arena debate through agno's Claude class against the local fake of
the Messages API (testkit/anthropic_api.py), which keeps a prompt cache by the documented rules
(breakpoints, minimum cacheable length, 20-block lookback) and estimates 4 characters per token.
Models and prices are config.yaml's: Sonnet 5.5 speaks, Haiku 5.5 casts the ballots.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.models import TokenUsage
from core.pricing import cost_of
from core.spec import DebateSpec
from testkit.anthropic_api import FakeAnthropic
from testkit.config import make_config
from testkit.recording import RecordingSink

SHAPES = {10: (1, 5), 20: (2, 5), 40: (4, 5), 100: (5, 10)}  # turns: (rounds, exchanges per round)


def speech(n: int) -> str:
    """About 120 words (roughly 170 tokens), different every turn, like a real speech."""
    return f"Point {n}. " + " ".join(
        f"Argument {n}.{i}: the record of city {i} shows what happens when streets change hands, and"
        " who pays for it."
        for i in range(6)
    )


@dataclass
class Result:
    strategy: str
    turns: int
    input_per_turn: float
    uncached_per_turn: float
    read_per_turn: float
    written_per_turn: float
    turn_cost: float
    debate_cost: float
    calls: int


async def run(
    strategy: str, turns: int, window: int = 16, ballots: str | None = "anthropic:claude-haiku-5-5"
) -> Result:
    rounds, exchanges = SHAPES[turns]
    api = FakeAnthropic(turn_text=speech)
    await api.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = make_config(
                Path(tmp),
                model={
                    "default": "anthropic:claude-sonnet-5-5",
                    "ballots": ballots,
                    "anthropic_base_url": api.base_url,
                    "latency": 0,
                },
                context={"strategy": strategy, "window": window},
                limits={"max_rounds": rounds, "max_tokens_per_debate": 0},
            )
            spec = DebateSpec(
                "arena",
                "Should cities ban cars?",
                {"humans": "off", "rounds": rounds, "exchanges_per_round": exchanges, "duration": 7200},
            )
            secrets = Secrets(anthropic_api_key="sk-bench-offline")
            async with Runtime(config, clock=FakeClock(), secrets=secrets) as rt:
                handle = await rt.start_debate(spec, RecordingSink(), seed=3)
                result = await handle.wait()
            prices = config.model.prices
    finally:
        await api.stop()
    speaking = [
        (r, rep)
        for r, rep in zip(api.requests, api.reports, strict=True)
        if r.body.get("stream") and "You are Sol Amari" not in r.body["system"][0]["text"]
    ]
    assert len(speaking) == turns, (len(speaking), turns)
    sonnet = prices["anthropic:claude-sonnet-5-5"]
    turn_cost = 0.0
    for _, rep in speaking:
        turn_cost += cost_of(
            TokenUsage(
                input_tokens=rep.total - rep.read - rep.written,
                cache_read_tokens=rep.read,
                cache_write_tokens=rep.written,
                output_tokens=len(speech(1)) // 4,
            ),
            sonnet,
        )
    n = len(speaking)
    return Result(
        strategy=strategy,
        turns=turns,
        input_per_turn=sum(rep.total for _, rep in speaking) / n,
        uncached_per_turn=sum(rep.total - rep.read - rep.written for _, rep in speaking) / n,
        read_per_turn=sum(rep.read for _, rep in speaking) / n,
        written_per_turn=sum(rep.written for _, rep in speaking) / n,
        turn_cost=turn_cost,
        debate_cost=result.stats.tokens.cost_usd,
        calls=len(api.requests),
    )


async def main(windows: list[int]) -> None:
    print(
        "| strategy | turns | prompt tokens per turn | of which uncached / cache read / cache write"
        " | speeches' cost | whole debate's cost (all calls) | model calls |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for turns in SHAPES:
        runs = [await run("bounded", turns)] + [await run("transcript", turns, w) for w in windows]
        for r, label in zip(runs, ["bounded", *(f"transcript, window {w}" for w in windows)], strict=True):
            print(
                f"| {label} | {r.turns} | {r.input_per_turn:,.0f} | {r.uncached_per_turn:,.0f} /"
                f" {r.read_per_turn:,.0f} / {r.written_per_turn:,.0f} | ${r.turn_cost:.4f} |"
                f" ${r.debate_cost:.4f} | {r.calls} |"
            )

    print()
    print("Ballots on Sonnet 5.5 instead of Haiku 5.5 (transcript, window 16):")
    for turns in SHAPES:
        haiku = await run("transcript", turns)
        sonnet = await run("transcript", turns, ballots=None)
        print(f"- {turns} turns: ${sonnet.debate_cost:.4f} instead of ${haiku.debate_cost:.4f}")


if __name__ == "__main__":
    asyncio.run(main([int(w) for w in sys.argv[1:]] or [16]))
