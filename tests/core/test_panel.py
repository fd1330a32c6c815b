"""The panel's rules, each shown by a whole debate through the real runtime (fake clock, offline)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from adapters.console.render import ConsoleView
from bot.config import Secrets
from bot.runtime import Runtime
from core.documents import Document, load_document
from core.errors import SpecError
from core.events import (
    Artifact,
    DebateCompleted,
    DebateStarted,
    Notice,
    PhaseChanged,
    TurnStarted,
    dump_event,
)
from core.models import QuoteCheck
from core.spec import DebateSpec
from testkit.anthropic_api import FakeAnthropic
from tests.core.runs import Run, run_debate
from tests.helpers import RecordingSink, make_config

CLIMATE = Document(
    name="climate.md",
    text="# Aldmoor climate report\n\n"
    "Sea levels at the Port of Aldmoor rose 9 cm between 2001 and 2021.\n"
    "The council expects the harbour wall to be overtopped twice a year by 2040.\n",
)
TRANSPORT = Document(
    name="transport.md",
    text="# Aldmoor transport review\n\n"
    "The Aldmoor tram carried 41 million riders in 2023, twice the 2015 figure.\n"
    "Cycling grew fastest in the eastern districts, where new lanes opened in 2021.\n",
)
BRIEF = Document(name="brief.md", text="Aldmoor must plan for a wetter coast and a busier centre.\n")
QUESTION = "How should Aldmoor prepare for the next twenty years?"
SUBJECT = "Aldmoor's next twenty years"
DRAWN = ["How fast is the sea rising at Aldmoor?", "How many people ride the Aldmoor tram?"]
TWO_DOCS: dict[str, Any] = {"documents": [CLIMATE, TRANSPORT], "rounds": 1}


def with_questions(**extra: Any) -> dict[str, Any]:
    return {**TWO_DOCS, "question_document": BRIEF, "questions": 2, **extra}


@pytest.fixture
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    api = FakeAnthropic()
    await api.start()
    yield api
    await api.stop()


async def run_through_claude(tmp_path: Path, api: FakeAnthropic, options: dict[str, Any]) -> Run:
    return await run_debate(
        tmp_path,
        fmt="panel",
        topic=QUESTION,
        options=options,
        model={"default": "anthropic:claude-sonnet-4-5", "anthropic_base_url": api.base_url},
        secrets=Secrets(anthropic_api_key="sk-test-offline"),
    )


def shown_to(api: FakeAnthropic, persona_name: str) -> list[str]:
    """Everything each request of one persona carried (system prompt and messages), in order."""
    shown = []
    for request in api.requests:
        system = request.body["system"][0]["text"]
        if system.startswith(f"You are {persona_name}"):
            texts = [part["text"] for m in request.body["messages"] for part in m["content"]]
            shown.append("\n".join([system, *texts]))
    return shown


def render(run: Run) -> str:
    console = Console(record=True, width=400, color_system=None)  # wide: no wrapped lines
    view = ConsoleView()
    for event in run.sink.events:
        for piece in view.render(event):
            console.print(piece.renderable, end="" if piece.inline else "\n")
    return console.export_text()


# --- what each panellist is shown --------------------------------------------------------------


async def test_round_0_prompts_contain_only_the_panellists_own_document(
    tmp_path: Path, anthropic_api: FakeAnthropic
) -> None:
    run = await run_through_claude(tmp_path, anthropic_api, TWO_DOCS)

    basil, rhea = shown_to(anthropic_api, "Basil Thorne"), shown_to(anthropic_api, "Rhea Lindqvist")
    assert len(basil) == len(rhea) == 2  # round 0 and round 1
    assert shown_to(anthropic_api, "Kit Nakamura") == []  # two documents seat two panellists
    basil_round_0, basil_round_1 = basil
    rhea_round_0, rhea_round_1 = rhea
    assert "Round 0." in basil_round_0 and "Round 0." in rhea_round_0
    assert CLIMATE.text in basil_round_0 and "Aldmoor tram" not in basil_round_0
    assert TRANSPORT.text in rhea_round_0 and "Sea levels" not in rhea_round_0
    assert QUESTION in basil_round_0 and QUESTION in rhea_round_0

    # later rounds: their own document and everyone's answers so far, still never another document
    assert CLIMATE.text in basil_round_1 and "Aldmoor tram" not in basil_round_1
    assert TRANSPORT.text in rhea_round_1 and "Sea levels" not in rhea_round_1
    answer = anthropic_api.turn_text
    assert f"[Rhea Lindqvist, from transport.md] {answer}" in basil_round_1
    assert f"[Basil Thorne (you), from climate.md] {answer}" in basil_round_1

    [synthesis] = shown_to(anthropic_api, "Sol Amari")
    assert "Sea levels" not in synthesis and "Aldmoor tram" not in synthesis
    assert f"[Basil Thorne, from climate.md] {answer}" in synthesis

    temperatures = {
        r.body["system"][0]["text"].split(",")[0]: r.body["temperature"] for r in anthropic_api.requests
    }
    assert temperatures == {
        "You are Basil Thorne": 0.4,
        "You are Rhea Lindqvist": 0.4,
        "You are Sol Amari": 0.3,
    }
    assert run.result.reason == "completed"


async def test_the_synthesiser_is_warned_about_quotes_not_in_the_speakers_document(
    tmp_path: Path, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.turn_text = "My document says “the harbour wall will surely collapse by 2030”."
    run = await run_through_claude(tmp_path, anthropic_api, {**TWO_DOCS, "rounds": 0})
    assert [t.quotes for t in run.turns("panellist")] == [
        (QuoteCheck(text="the harbour wall will surely collapse by 2030", verified=False),)
    ] * 2
    [synthesis] = shown_to(anthropic_api, "Sol Amari")
    assert "Quotations NOT found in the speaker's document" in synthesis
    assert "- Basil Thorne: “the harbour wall will surely collapse by 2030”" in synthesis


# --- quotes ------------------------------------------------------------------------------------


async def test_quotes_are_checked_against_the_panellists_own_document(tmp_path: Path) -> None:
    script = {
        "persona:basil:panellist": [
            "My report is plain: “Sea levels at the Port of Aldmoor rose 9 cm between 2001 and 2021.” "
            "It also warns that “the harbour wall will collapse within five years”.",
            "Rhea says “The Aldmoor tram carried 41 million riders” and my report still says "
            "“the harbour wall to be overtopped twice a year by 2040”.",
        ],
        "persona:rhea:panellist": [
            "Asked “how should Aldmoor prepare for the next twenty years”, my review says "
            "“The Aldmoor tram carried 41 million riders in 2023” and "
            "“sea levels at the Port of Aldmoor rose 9 cm” too."
        ],
    }
    run = await run_debate(tmp_path, fmt="panel", topic=QUESTION, script=script, options=TWO_DOCS)
    quotes = {(t.speaker.id, t.round): t.quotes for t in run.turns("panellist")}
    assert quotes[("basil", 0)] == (
        QuoteCheck(text="Sea levels at the Port of Aldmoor rose 9 cm between 2001 and 2021.", verified=True),
        QuoteCheck(text="the harbour wall will collapse within five years", verified=False),
    )
    # true of Basil's document, but Rhea's is the one she answers from (and the question is no quote)
    assert quotes[("rhea", 0)] == (
        QuoteCheck(text="The Aldmoor tram carried 41 million riders in 2023", verified=True),
        QuoteCheck(text="sea levels at the Port of Aldmoor rose 9 cm", verified=False),
    )
    # in round 1, quoting a colleague's answer back is not a claim about one's own document
    assert quotes[("basil", 1)] == (
        QuoteCheck(text="the harbour wall to be overtopped twice a year by 2040", verified=True),
    )
    assert quotes[("rhea", 1)] == (
        QuoteCheck(text="The Aldmoor tram carried 41 million riders in 2023", verified=True),
    )

    [artifact] = run.of(Artifact)
    assert (
        "- “the harbour wall will collapse within five years” — ✘ not found in climate.md" in artifact.content
    )
    assert "- “The Aldmoor tram carried 41 million riders in 2023” — ✔ verified" in artifact.content
    assert "Quotes checked: 4 verified, 2 not found" in run.result.summary


# --- refusals ----------------------------------------------------------------------------------


async def test_an_oversize_document_is_refused_with_a_clear_message_and_nothing_starts(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("Aldmoor. " * 5812 + "Tr", encoding="utf-8")  # 52,310 characters
    message = "notes.md is 52,310 characters; the limit is 40,000."
    with pytest.raises(SpecError) as refused_on_load:
        load_document("notes.md", notes.read_bytes(), limit=40_000)
    assert str(refused_on_load.value) == message

    oversize = Document(name="notes.md", text=notes.read_text(encoding="utf-8"))
    sink = RecordingSink()
    async with Runtime(make_config(tmp_path), secrets=Secrets()) as rt:
        for options in (
            {"documents": [CLIMATE, oversize]},
            {"documents": [CLIMATE], "question_document": oversize},
        ):
            with pytest.raises(SpecError) as refused:
                await rt.start_debate(DebateSpec("panel", QUESTION, options), sink)
            assert str(refused.value) == message
        assert await rt.store.list_debates() == []
    assert sink.events == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "The panel needs documents: attach one text or Markdown file per panellist (up to 3)"),
        (
            {"documents": [CLIMATE, TRANSPORT, BRIEF, CLIMATE]},
            "The panel has 3 panellists, so it takes at most 3 documents (one each); got 4.",
        ),
        ({"documents": [Document(name="blank.md", text=" \n")]}, "blank.md is empty."),
        ({"documents": [CLIMATE], "rounds": 9}, "rounds must be at most 5 (got 9)"),
        ({"documents": [CLIMATE], "moderator": "sol"}, "Unknown option 'moderator'"),
    ],
)
def test_bad_requests_are_refused_before_anything_starts(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    rt = Runtime(make_config(tmp_path), secrets=Secrets())
    with pytest.raises(SpecError) as refused:
        rt.prepare(DebateSpec("panel", QUESTION, options))
    assert str(refused.value).startswith(message)


# --- the run -----------------------------------------------------------------------------------


async def test_each_question_gets_round_0_then_the_rounds_then_a_synthesis(tmp_path: Path) -> None:
    script = {"synthesiser": [{"questions": DRAWN}, "Final one.", "Final two."]}
    run = await run_debate(tmp_path, fmt="panel", topic=SUBJECT, script=script, options=with_questions())
    assert [t.heading for t in run.of(TurnStarted)] == [
        "Questions from brief.md",
        "Q1 · Round 0 · from climate.md",
        "Q1 · Round 0 · from transport.md",
        "Q1 · Round 1 · from climate.md",
        "Q1 · Round 1 · from transport.md",
        "Q1 · Synthesis",
        "Q2 · Round 0 · from climate.md",
        "Q2 · Round 0 · from transport.md",
        "Q2 · Round 1 · from climate.md",
        "Q2 · Round 1 · from transport.md",
        "Q2 · Synthesis",
    ]
    assert run.turns("synthesiser")[0].text == f"Q1. {DRAWN[0]}\nQ2. {DRAWN[1]}"
    assert [p.detail for p in run.of(PhaseChanged)] == [
        "Sol Amari draws 2 questions from brief.md",
        "Q1 · Round 0: each panellist answers from their own document",
        "Q1 · Round 1: the panellists respond to each other's answers",
        "Q1 · Sol Amari writes the final answer",
        "Q2 · Round 0: each panellist answers from their own document",
        "Q2 · Round 1: the panellists respond to each other's answers",
        "Q2 · Sol Amari writes the final answer",
        "2 questions answered",
    ]
    assert [t.text for t in run.turns("synthesiser")[1:]] == ["Final one.", "Final two."]
    assert run.result.reason == "completed"


async def test_panellists_answer_each_round_at_the_same_time(tmp_path: Path) -> None:
    slow = {"say": "An answer that took its time.", "delay": 10}
    script = {"persona:basil:panellist": [slow], "persona:rhea:panellist": [slow]}
    run = await run_debate(
        tmp_path,
        fmt="panel",
        topic=QUESTION,
        script=script,
        options={**TWO_DOCS, "rounds": 0},
        model={"latency": 0},
    )
    # two panellists each taking 10 s: in parallel the round takes ~10 s, not 20 s
    assert 10 <= run.result.stats.debate_seconds < 20


async def test_the_final_questions_and_answers_are_posted_as_a_markdown_file(tmp_path: Path) -> None:
    script = {
        "synthesiser": [{"questions": DRAWN}, "About 9 cm in twenty years.", "41 million rides in 2023."],
        "persona:basil:panellist": ["Basil's answer."],
        "persona:rhea:panellist": ["Rhea's answer."],
    }
    run = await run_debate(tmp_path, fmt="panel", topic=SUBJECT, script=script, options=with_questions())
    *_, artifact, completed = run.sink.events
    assert isinstance(artifact, Artifact) and isinstance(completed, DebateCompleted)
    assert artifact.name == f"panel-{run.debate_id}.md" and artifact.media_type == "text/markdown"
    content = artifact.content
    assert content.startswith(f"# Panel: {SUBJECT}\n")
    assert (
        f"- Basil Thorne: climate.md ({len(CLIMATE.text)} characters)\n"
        f"- Rhea Lindqvist: transport.md ({len(TRANSPORT.text)} characters)\n"
        "- Questions drawn from brief.md by Sol Amari\n"
    ) in content
    q1 = content.index(f"## Q1. {DRAWN[0]}\n\n**Final answer** (Sol Amari):\n\nAbout 9 cm in twenty years.")
    q2 = content.index(f"## Q2. {DRAWN[1]}\n\n**Final answer** (Sol Amari):\n\n41 million rides in 2023.")
    assert q1 < q2
    assert content.count("#### Round 0 · Basil Thorne · from climate.md\n\nBasil's answer.") == 2
    assert content.count("#### Round 1 · Rhea Lindqvist · from transport.md\n\nRhea's answer.") == 2
    assert artifact in run.stored  # stored like every event
    assert completed.summary.endswith(f"The questions and answers are in {artifact.name}.")


async def test_documents_are_named_and_sized_in_events_but_their_text_stays_out(tmp_path: Path) -> None:
    # answers that quote nothing, so any document text in the log could only have leaked
    script = {"panellist": ["An answer in my own words."], "synthesiser": ["The panel's answer."]}
    run = await run_debate(tmp_path, fmt="panel", topic=QUESTION, options=TWO_DOCS, script=script)
    [started] = run.of(DebateStarted)
    assert {m.persona.id: m.role for m in started.cast} == {
        "basil": "panellist",
        "rhea": "panellist",
        "sol": "synthesiser",
    }
    assert started.settings["documents"] == [
        {"name": "climate.md", "chars": len(CLIMATE.text), "panellist": "basil"},
        {"name": "transport.md", "chars": len(TRANSPORT.text), "panellist": "rhea"},
    ]
    assert started.settings["questions"] == [QUESTION]
    stored = "".join(dump_event(e) for e in run.stored)
    assert "overtopped twice a year" not in stored and "Cycling grew fastest" not in stored
    assert run.record is not None and run.record.spec["options"]["documents"][0]["text"] == CLIMATE.text


async def test_configured_documents_are_used_when_none_are_attached(tmp_path: Path) -> None:
    (tmp_path / "climate.md").write_text(CLIMATE.text, encoding="utf-8")
    script = {"persona:basil:panellist": ["“The council expects the harbour wall to be overtopped”"]}
    run = await run_debate(
        tmp_path,
        fmt="panel",
        topic=QUESTION,
        script=script,
        options={"rounds": 0},
        formats={"panel": {"documents": [str(tmp_path / "climate.md")]}},
    )
    assert run.of(DebateStarted)[0].settings["documents"] == [
        {"name": "climate.md", "chars": len(CLIMATE.text), "panellist": "basil"}
    ]
    [answer] = run.turns("panellist")
    assert answer.quotes == (
        QuoteCheck(text="The council expects the harbour wall to be overtopped", verified=True),
    )


async def test_a_configured_document_too_large_ends_the_panel_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_text("x" * 1500, encoding="utf-8")
    run = await run_debate(
        tmp_path,
        fmt="panel",
        topic=QUESTION,
        formats={"panel": {"documents": [str(tmp_path / "big.md")], "max_document_chars": 1000}},
    )
    assert [e.kind for e in run.sink.events] == ["debate_started", "notice", "debate_completed"]
    assert run.of(Notice)[0].message == "big.md is 1,500 characters; the limit is 1,000."
    assert (
        run.result.reason == "failed"
        and run.result.detail == "big.md is 1,500 characters; the limit is 1,000."
    )


def test_a_missing_configured_document_is_refused_before_anything_starts(tmp_path: Path) -> None:
    config = make_config(tmp_path, formats={"panel": {"documents": [str(tmp_path / "gone.md")]}})
    with pytest.raises(SpecError) as refused:
        Runtime(config, secrets=Secrets()).prepare(DebateSpec("panel", QUESTION, {}))
    assert str(refused.value) == (
        f"The panel's configured document {tmp_path / 'gone.md'} cannot be found:"
        " attach the documents instead"
    )


# --- failures and limits -----------------------------------------------------------------------


async def test_unusable_questions_fall_back_to_the_topic_with_a_notice(tmp_path: Path) -> None:
    script = {"synthesiser": ["I would rather not.", "Still no.", "The final answer."]}
    run = await run_debate(
        tmp_path, fmt="panel", topic=SUBJECT, script=script, options=with_questions(rounds=0)
    )
    [notice] = run.of(Notice)
    assert notice.level == "warning" and notice.message == (
        "Sol Amari could not draw questions from brief.md (its reply held no usable questions);"
        f" the panel answers “{SUBJECT}” instead."
    )
    assert [t.heading for t in run.of(TurnStarted)][-1] == "Q1 · Synthesis"
    assert run.turns("synthesiser")[-1].text == "The final answer."


async def test_a_spent_token_budget_ends_the_panel_before_the_next_round(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path,
        fmt="panel",
        topic=QUESTION,
        options=TWO_DOCS,
        limits={"max_tokens_per_debate": 1},
    )
    assert run.turns() == []  # not even round 0 fits in a budget of 1: no call is made
    assert run.result.reason == "budget" and run.result.detail == "the token budget of 1 was spent"
    assert not run.of(Artifact)  # nothing was answered, so there is no Q&A file
    assert run.result.summary.startswith("The panel ended early: the token budget of 1 was spent.")


async def test_a_full_run_renders_every_event_it_emits_in_the_terminal(tmp_path: Path) -> None:
    script = {
        "synthesiser": [{"questions": DRAWN}, "Final one.", "Final two."],
        "persona:basil:panellist": [
            "“Sea levels at the Port of Aldmoor rose 9 cm” and “the harbour wall will collapse soon enough”."
        ],
        "persona:rhea:panellist": [
            "From my review, trams.",
            {"error": "reply cut off"},
            {"error": "reply cut off"},
            "Trams.",
        ],
    }
    run = await run_debate(tmp_path, fmt="panel", topic=SUBJECT, script=script, options=with_questions())
    assert {e.kind for e in run.sink.events} == {
        "debate_started",
        "phase_changed",
        "turn_started",
        "turn_delta",
        "turn_completed",
        "notice",
        "artifact",
        "debate_completed",
    }
    shown = render(run)
    opening = shown.split("Questions from brief.md")[0]
    assert "Rostra · panel" in opening and SUBJECT in opening
    assert all(name in opening for name in ("Basil Thorne", "Rhea Lindqvist", "Sol Amari"))
    assert "Kit Nakamura" not in shown
    for expected in (
        "Sol Amari  Questions from brief.md",
        f"Q1. {DRAWN[0]}",
        "Basil Thorne  Q1 · Round 0 · from climate.md",
        "“Sea levels at the Port of Aldmoor rose 9 cm” ✔",
        "“the harbour wall will collapse soon enough” ✘",
        "(Rhea Lindqvist lost the thread for a moment and yields the floor.)",
        "Rhea Lindqvist's turn failed twice (reply cut off); a fallback line stands in.",
        "Sol Amari  Q2 · Synthesis",
        "Final two.",
        "Closing: 2 questions answered",
        f"📎 panel-{run.debate_id}.md",
        "Sol Amari wrote the final answers to both questions.",
    ):
        assert expected in shown, expected
