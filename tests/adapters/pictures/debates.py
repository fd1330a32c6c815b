"""Whole debates of every format for the picture tests: real runtime, real SQLite file, scripted model.

Each returns the event log as the store holds it (`store.events`), which is all a picture reads.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.config import Config, Secrets
from bot.runtime import Runtime
from core.clock import FakeClock
from core.documents import Document
from core.events import Event, HumanVoteOpened, TurnCompleted
from core.ports import DebateRecord, EventSink
from core.session import DebateHandle
from core.spec import DebateSpec
from tests.core.runs import Run, run_debate
from tests.helpers import RecordingSink, make_config, write_script

TOPIC = "Should cities ban cars?"


def folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- arena: Ada keeps the floor 3–1 after round 1, is replaced 1–3 after round 2 ----------------

ARENA_OPTIONS = {"rounds": 3, "exchanges_per_round": 1, "first_speaker": "ada", "humans": "off"}
ARENA_SCRIPT: dict[str, Any] = {
    f"persona:{pid}:observer": [{"vote": first, "reason": f"{pid}: {first}"}, {"vote": second, "reason": "x"}]
    for pid, first, second in (
        ("basil", "keep", "replace"),
        ("celeste", "keep", "replace"),
        ("dario", "keep", "replace"),
        ("esme", "replace", "keep"),
    )
}


async def arena(tmp_path: Path, rounds: int = 3) -> Run:
    options = {**ARENA_OPTIONS, "rounds": rounds}
    return await run_debate(folder(tmp_path), script=ARENA_SCRIPT, options=options, limits={"max_rounds": 50})


# --- oxford: the audience moves from for to against ------------------------------------------

AUDIENCE = {
    "audience-before": {"u1": "for", "u2": "for", "u3": "against", "u4": "undecided"},
    "audience-after": {"u1": "for", "u2": "against", "u3": "against", "u4": "against"},
}
JUDGE = {"judge": [{"decision": "verdict", "winner": "critic", "reasoning": "The critic's case held."}]}


async def oxford(tmp_path: Path, *, audience: bool = True, topic: str = TOPIC) -> Run:

    async def vote(rt: object, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, HumanVoteOpened):
            for user, choice in AUDIENCE[event.vote_id].items():
                await handle.cast_human_vote(event.vote_id, user, choice, voter_name=user)

    return await run_debate(
        folder(tmp_path),
        fmt="oxford",
        topic=topic,
        script=JUDGE,
        hook=vote if audience else None,
        options={"humans": "vote", "human_window": 20} if audience else {"humans": "off"},
    )


# --- council: Esme and Kit revise towards Ada's proposal; Dario's wins the vote -----------------

PROPOSALS = {
    "ada": "Price the roads: a congestion charge on the central district, with the revenue paying for buses.",
    "dario": "Auction kerb space block by block and let parking prices find their level.",
    "esme": "Close school streets to cars at drop-off times, with exemptions for disabled drivers.",
    "kit": "Build protected bike lanes on the ten busiest corridors within three years.",
}
COUNCIL_VOTES = {"ada": "p2", "dario": "p2", "esme": "p1", "kit": "p2"}


def council_script() -> dict[str, Any]:
    script: dict[str, Any] = {}
    for pid, text in PROPOSALS.items():
        revision = PROPOSALS["ada"] if pid in ("esme", "kit") else text
        vote = {"choice": COUNCIL_VOTES[pid], "reason": f"{pid} chooses {COUNCIL_VOTES[pid]}"}
        script[f"persona:{pid}:council"] = [text, revision, vote]
    return script


async def council(tmp_path: Path) -> Run:
    return await run_debate(
        folder(tmp_path),
        fmt="council",
        topic="How should our city cut car traffic downtown?",
        script=council_script(),
        options={"rounds": 1, "humans": "off"},
    )


# --- panel: Basil and Rhea end on the same answer, Kit on another ------------------------------

DOCUMENTS = [
    Document(name="trams.md", text="Trams carry more people per lane than cars ever could.\n"),
    Document(name="shops.md", text="Shops near the old ring road lost a third of their trade.\n"),
    Document(name="parks.md", text="The new riverside park doubled weekend footfall in the centre.\n"),
]
SHARED_FINAL = "Build the tram line first, then close the ring road to through traffic."
PANEL_SCRIPT: dict[str, Any] = {
    "persona:basil:panellist": [
        'My document says "Trams carry more people per lane than cars ever could."',
        SHARED_FINAL,
    ],
    "persona:rhea:panellist": [
        'My document says "Shops near the old ring road lost a third of their trade."',
        SHARED_FINAL,
    ],
    "persona:kit:panellist": [
        'My document says "The park tripled footfall."',
        "Green space matters more than transport; plant trees along every avenue.",
    ],
}


async def panel(tmp_path: Path) -> Run:
    return await run_debate(
        folder(tmp_path),
        fmt="panel",
        topic="How should Aldmoor prepare for the next twenty years?",
        script=PANEL_SCRIPT,
        options={"documents": DOCUMENTS, "rounds": 1},
    )


# --- a debate cut off mid-way and resumed ------------------------------------------------------


def _config(tmp_path: Path, script: dict[str, Any]) -> Config:
    return make_config(
        folder(tmp_path), model={"latency": 0.5, "script": str(write_script(tmp_path, script))}
    )


async def cut_and_resumed(
    tmp_path: Path, spec: DebateSpec, script: dict[str, Any], cut_at: str
) -> list[Event]:
    """Run `spec`, cut it off (as a shutdown would) when turn `cut_at` completes, resume it to the end."""
    config = _config(tmp_path, script)
    reached = asyncio.Event()
    sink = RecordingSink()
    sink.hooks.append(
        lambda e: reached.set() if isinstance(e, TurnCompleted) and e.turn_id == cut_at else None
    )
    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(spec, sink, seed=4)
        waiting = asyncio.ensure_future(reached.wait())
        await asyncio.wait(
            [waiting, asyncio.ensure_future(handle.wait())], return_when=asyncio.FIRST_COMPLETED
        )
        waiting.cancel()
        assert not handle.done, "the debate ended before the cut"
        debate_id = handle.debate_id

    async def reattach(record: DebateRecord, bindings: dict[str, str]) -> EventSink | None:
        return RecordingSink()

    async with Runtime(config, clock=FakeClock(), secrets=Secrets()) as rt:
        handles = await rt.resume_debates("terminal", reattach)
        assert [h.debate_id for h in handles] == [debate_id]
        await handles[0].wait()
        return await rt.store.events(debate_id)


async def uncut(tmp_path: Path, spec: DebateSpec, script: dict[str, Any]) -> list[Event]:
    async with Runtime(_config(tmp_path, script), clock=FakeClock(), secrets=Secrets()) as rt:
        handle = await rt.start_debate(spec, RecordingSink(), seed=4)
        await handle.wait()
        return await rt.store.events(handle.debate_id)
