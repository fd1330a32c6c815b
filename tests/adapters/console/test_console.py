"""The terminal front end: what a person sees, and voting from a terminal during a tie."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path

from rich.console import Console

from adapters.console import ConsoleSink, ConsoleView, parse_choice
from bot.config import Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.events import Event, HumanVoteOpened, VoteCast
from core.formats.arena import OPTIONS
from core.spec import DebateSpec
from tests.core.runs import run_debate
from tests.helpers import make_config, write_script


def render(events: list[Event]) -> str:
    console = Console(record=True, width=100, color_system=None)
    view = ConsoleView()
    for event in events:
        for piece in view.render(event):
            console.print(piece.renderable, end="" if piece.inline else "\n", soft_wrap=piece.inline)
    return console.export_text()


async def test_a_debate_reads_as_turns_votes_switches_and_closing_figures(tmp_path: Path) -> None:
    script = {
        "proposition": ["Cars crowd out people. Give the streets back."],
        "opposition": ["Deliveries and disabled drivers need roads."],
        "observer": [{"vote": "replace", "reason": "Too abstract."}],
        "moderator": ["A close debate about access and space."],
    }
    run = await run_debate(
        tmp_path, script=script, options={"rounds": 2, "exchanges_per_round": 1, "first_speaker": "ada"}
    )
    text = render(run.sink.events)
    assert "Rostra · arena" in text and "Should cities ban cars?" in text
    assert "🧮 Ada Quill  Round 1 · for the motion\nCars crowd out people. Give the streets back." in text
    assert "🪨 Vera Stone  Round 1 · against the motion" in text
    assert "🗳  Should Ada Quill keep the floor?" in text
    assert "🦉 Basil Thorne → ❌ Replace  Too abstract." in text
    assert "Ada Quill is replaced" in text and "AI: Keep 0 · Replace 4" in text
    assert (
        "🔁 🧮 Ada Quill steps down;" in text
        and "takes the floor (voted off 4–0 by the observers' majority)" in text
    )
    assert "🎙️ Sol Amari  Closing summary\nA close debate about access and space." in text
    assert "Statistics" in text and "Ended: all 2 rounds were played" in text
    assert (
        text.index("Round 1 · for the motion") < text.index("🗳") < text.index("🔁") < text.index("Statistics")
    )


async def test_a_fallback_and_a_notice_are_visible(tmp_path: Path) -> None:
    script = {"proposition": [{"error": "down"}, {"error": "still down"}, "ok"]}
    run = await run_debate(tmp_path, script=script, options={"rounds": 1, "exchanges_per_round": 1})
    text = render(run.sink.events)
    assert "tries again" in text
    assert "lost the thread for a moment and yields the floor" in text
    assert "⚠  " in text and "failed twice (still down)" in text


def test_typed_answers_map_to_options() -> None:
    assert parse_choice("2", OPTIONS) == "replace"
    assert parse_choice(" K ", OPTIONS) == "keep"
    assert parse_choice("replace", OPTIONS) == "replace"
    assert parse_choice("maybe", OPTIONS) is None and parse_choice("", OPTIONS) is None


async def test_a_person_at_the_terminal_breaks_a_tie(tmp_path: Path) -> None:
    """The vote is typed into a real pipe standing in for the terminal's stdin."""
    script = write_script(
        tmp_path,
        {
            **{
                f"persona:{p}:observer": [{"vote": v, "reason": "r"}]
                for p, v in {
                    "basil": "keep",
                    "celeste": "keep",
                    "dario": "replace",
                    "esme": "replace",
                }.items()
            },
        },
    )
    read_fd, write_fd = os.pipe()
    config = make_config(tmp_path, model={"script": str(script), "latency": 0})
    console = Console(record=True, width=100, color_system=None)
    with os.fdopen(read_fd, "r") as stdin:
        sink = ConsoleSink(console, interactive=True, stdin=stdin)
        typed: list[str] = []
        original_emit = sink.emit

        async def emit(event: Event) -> None:
            await original_emit(event)
            if isinstance(event, HumanVoteOpened):
                os.write(write_fd, b"2\n")  # the person types "2" (replace) and Enter
                typed.append(event.vote_id)

        sink.emit = emit  # type: ignore[method-assign]
        clock = FakeClock()
        async with Runtime(config, clock=clock, secrets=Secrets()) as rt:
            handle = await rt.start_debate(
                DebateSpec(
                    "arena",
                    "Tabs or spaces?",
                    {
                        "rounds": 2,
                        "exchanges_per_round": 1,
                        "first_speaker": "ada",
                        "humans": "tiebreak",
                        "human_window": 10,
                    },
                ),
                sink,
            )
            sink.attach(handle)
            original_sleep = clock.sleep

            async def sleep(seconds: float) -> None:  # the window: give the reader a moment for real
                if seconds == 10:
                    for _ in range(50):
                        await asyncio.sleep(0.01)
                        if handle.state.ballots["v1"].human_votes:
                            break
                await original_sleep(seconds)

            clock.sleep = sleep  # type: ignore[method-assign]
            result = await handle.wait()
            await sink.aclose()
        os.close(write_fd)
    assert typed == ["v1"]
    votes = [e for e in handle.state.ballots["v1"].human_votes.values() if isinstance(e, VoteCast)]
    assert [(v.voter.name, v.choice) for v in votes] == [("you", "replace")]
    assert result.stats.switches == 1
    assert "Your vote? type 1=keep, 2=replace" in console.export_text()


ESCAPES = "\x1b]0;owned\x07\x1b[2J\x9b31m"


async def test_control_characters_never_reach_the_terminal(tmp_path: Path) -> None:
    script = {
        "proposition": [f"Cars out.{ESCAPES} People in."],
        "opposition": ["No."],
        "observer": [{"vote": "keep", "reason": f"Fine{ESCAPES}"}],
        "moderator": ["Done."],
    }
    run = await run_debate(
        tmp_path,
        script=script,
        topic=f"Ban cars?{ESCAPES}",
        options={"rounds": 2, "exchanges_per_round": 1},
    )
    assert run.record is not None and "\x1b" not in run.record.topic  # cleaned when accepted
    console = Console(record=True, width=100, color_system=None, file=io.StringIO())
    sink = ConsoleSink(console, interactive=False)
    sink.show_history(run.stored)
    shown = console.export_text()
    assert "Cars out." in shown and "People in." in shown
    assert not any(c in shown for c in "\x1b\x07\x9b")
