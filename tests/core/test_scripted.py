"""The scripted provider through real agno Agents: scripts, precedence, failures, seeded defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from agno.agent import Agent

from core.clock import FakeClock
from core.errors import ModelCallError, ModelConfigError
from core.formats.arena import ArenaVote
from core.llm.agents import PersonaAgent
from core.llm.scripted import Script, ScriptedModel
from tests.helpers import write_script


def agent(
    persona: str,
    role: str,
    script: Script | None,
    *,
    seed: int = 0,
    clock: FakeClock | None = None,
    latency: float = 0.0,
) -> PersonaAgent:
    model = ScriptedModel(
        persona_id=persona,
        persona_name=persona.title(),
        role=role,
        topic="Tabs or spaces?",
        script=script,
        seed=seed,
        latency=latency,
        clock=clock or FakeClock(),
    )
    return PersonaAgent(
        Agent(model=model, system_message="You debate.", telemetry=False, resolve_in_context=False),
        label=persona,
        timeout=30,
    )


async def speak(a: PersonaAgent) -> str:
    chunks: list[str] = []

    async def collect(text: str) -> None:
        chunks.append(text)

    turn = await a.speak("Go.", collect)
    assert "".join(chunks).strip() == turn.text
    return turn.text


async def test_replies_are_consumed_in_order_and_the_last_repeats() -> None:
    script = Script.parse({"proposition": ["one", "two"]})
    a = agent("ada", "proposition", script)
    assert [await speak(a) for _ in range(4)] == ["one", "two", "two", "two"]


async def test_a_roles_list_is_shared_by_every_persona_in_call_order() -> None:
    script = Script.parse({"proposition": ["first", "second", "third"]})
    ada, basil = agent("ada", "proposition", script), agent("basil", "proposition", script)
    assert [await speak(ada), await speak(basil), await speak(ada)] == ["first", "second", "third"]


async def test_the_more_specific_key_wins() -> None:
    script = Script.parse(
        {
            "observer": [{"vote": "keep", "reason": "role"}],
            "persona:basil": ["basil speaks"],
            "persona:basil:observer": [{"vote": "replace", "reason": "basil as observer"}],
        }
    )
    assert (await agent("celeste", "observer", script).decide("?", ArenaVote)).value == ArenaVote(
        vote="keep", reason="role"
    )
    basil_vote = await agent("basil", "observer", script).decide("?", ArenaVote)
    assert basil_vote.value == ArenaVote(vote="replace", reason="basil as observer")
    assert await speak(agent("basil", "proposition", script)) == "basil speaks"


async def test_a_scripted_error_fails_the_call() -> None:
    script = Script.parse({"proposition": [{"error": "reply cut off"}, "fine now"]})
    a = agent("ada", "proposition", script)
    with pytest.raises(ModelCallError, match="reply cut off"):
        await speak(a)
    assert await speak(a) == "fine now"


async def test_text_that_is_not_a_vote_is_reported_as_unreadable() -> None:
    decision = await agent("ada", "observer", Script.parse({"observer": ["no JSON here"]})).decide(
        "?", ArenaVote
    )
    assert decision.value is None and decision.raw == "no JSON here"


async def test_latency_and_delays_are_spent_on_the_injected_clock() -> None:
    clock = FakeClock(start=0)
    script = Script.parse({"proposition": [{"say": "a b c d e f", "delay": 5}]})
    await speak(agent("ada", "proposition", script, clock=clock, latency=1.0))
    assert clock.now() == pytest.approx(5 + 2)  # the delay, then two chunks of three words


async def test_a_slow_reader_gets_the_chunks_that_came_due_meanwhile() -> None:
    """Paced like a network stream: chunk k is due k * latency after the call, whatever the reader
    does; a reader that stalls is not served later for every chunk after the stall."""
    clock = FakeClock(start=0)
    script = Script.parse({"proposition": ["a b c d e f g h i j k l"]})  # four chunks, 1 s apart
    arrivals: list[tuple[float, str]] = []

    async def stalls_on_the_first(text: str) -> None:
        arrivals.append((clock.now(), text))
        if len(arrivals) == 1:
            await clock.sleep(2.5)  # e.g. a slow store write: chunks 2 and 3 come due meanwhile

    model = agent("ada", "proposition", script, clock=clock, latency=1.0)
    await model.speak("Go.", stalls_on_the_first)
    assert [when for when, _ in arrivals] == [1.0, 3.5, 3.5, 4.0]
    assert "".join(text for _, text in arrivals) == "a b c d e f g h i j k l"


async def test_without_a_script_text_is_labelled_and_votes_follow_the_seed() -> None:
    text = await speak(agent("ada", "proposition", None, seed=4))
    assert text.startswith("[rehearsal]")
    assert text == await speak(agent("ada", "proposition", None, seed=4))
    assert text != await speak(agent("ada", "proposition", None, seed=5))
    seeded = [(await agent("ada", "observer", None, seed=9).decide("?", ArenaVote)).value for _ in range(2)]
    assert seeded[0] == seeded[1] and seeded[0] is not None
    assert seeded[0].reason.startswith("[rehearsal]")
    votes = {
        (await agent("ada", "observer", None, seed=s).decide("?", ArenaVote)).value.vote  # type: ignore[union-attr]
        for s in range(12)
    }
    assert votes == {"keep", "replace"}


async def test_token_usage_is_counted() -> None:
    chunks: list[str] = []

    async def collect(text: str) -> None:
        chunks.append(text)

    turn = await agent("ada", "proposition", Script.parse({"proposition": ["x" * 400]})).speak("Go.", collect)
    assert turn.usage.output_tokens == 100 and turn.usage.input_tokens > 0


def test_script_files_are_checked_when_loaded(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="not found"):
        Script.load(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("proposition: [unclosed", encoding="utf-8")
    with pytest.raises(ModelConfigError, match="not valid YAML"):
        Script.load(bad)
    with pytest.raises(ModelConfigError, match="empty list"):
        Script.load(write_script(tmp_path, {"proposition": []}))
    with pytest.raises(ModelConfigError, match="text or mappings"):
        Script.load(write_script(tmp_path, {"proposition": [3]}))


async def test_paced_by_the_reader_a_stall_delays_every_later_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The earlier pacing, which the capacity bench keeps for comparison (`--pacing reader`)."""
    monkeypatch.setattr(ScriptedModel, "paced_by_reader", True)
    clock = FakeClock(start=0)
    script = Script.parse({"proposition": ["a b c d e f g h i j k l"]})
    arrivals: list[float] = []

    async def stalls_on_the_first(text: str) -> None:
        arrivals.append(clock.now())
        if len(arrivals) == 1:
            await clock.sleep(2.5)

    model = agent("ada", "proposition", script, clock=clock, latency=1.0)
    await model.speak("Go.", stalls_on_the_first)
    assert arrivals == [1.0, 4.5, 5.5, 6.5]
