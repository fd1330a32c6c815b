"""What a panel works with and leaves behind: its options, the seats (a panellist and their
document), the questions with their answers, and the Markdown file of questions and answers.
Pure: no model calls, no events."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.documents import Document, check_quotes, read_document
from core.events import TurnCompleted
from core.models import Persona
from core.prompts import excerpt
from core.settings import CoreSettings
from core.turns import Annotate
from core.words import quote_mark


class PanelOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: list[Document] = Field(
        default_factory=list,
        description="one per panellist, in order; when none are given, the configured documents",
    )
    question_document: Document | None = Field(
        None, description="questions are drawn from it (the topic is then the subject)"
    )
    questions: int = Field(3, ge=1, le=10, description="questions to draw from the question document")
    rounds: int = Field(1, ge=0, le=5, description="rounds over the accumulated answers after round 0")


class PanelQuestions(BaseModel):
    """The questions the synthesiser draws from the question document."""

    questions: list[str] = Field(description="the questions, most important first")


@dataclass(frozen=True)
class Seat:
    """A panellist and the one document they answer from."""

    persona: Persona
    document: Document


@dataclass
class Question:
    number: int
    text: str
    answers: list[TurnCompleted] = field(default_factory=list)
    final: TurnCompleted | None = None


def quote_checker(document: Document, others: Sequence[str]) -> Annotate:
    """Check quotes against the document; quoting the question or a colleague back is not checked."""

    def annotate(text: str) -> dict[str, Any]:
        return {"quotes": check_quotes(text, document.text, skip_found_in=others)}

    return annotate


def read_all(paths: Sequence[str], limit: int) -> list[Document]:
    return [read_document(path, limit=limit) for path in paths]


def about(document: Document) -> dict[str, Any]:
    return {"name": document.name, "chars": len(document.text)}


def joined_names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def clean_questions(questions: Sequence[str], count: int, settings: CoreSettings) -> list[str]:
    """At most `count` distinct, non-empty questions, each trimmed to the topic length limit."""
    found: list[str] = []
    for raw in questions:
        text = excerpt(raw, settings.limits.max_topic_length)
        if text and text.casefold() not in {f.casefold() for f in found}:
            found.append(text)
    return found[:count]


def panel_markdown(
    topic: str,
    debate_id: str,
    seats: Sequence[Seat],
    synthesiser: Persona,
    questions: Sequence[Question],
    *,
    ending: str,
    question_document: Document | None = None,
) -> str:
    """The Q&A file: every question with its final answer, then each panellist's answers by round."""
    out = [
        f"# Panel: {topic}",
        "",
        f"Debate `{debate_id}` · final answers by {synthesiser.name} · {ending}",
        "",
        "## Documents",
        "",
        *(f"- {s.persona.name}: {s.document.name} ({len(s.document.text):,} characters)" for s in seats),
    ]
    if question_document is not None:
        out.append(f"- Questions drawn from {question_document.name} by {synthesiser.name}")
    sources = {s.persona.id: s.document.name for s in seats}
    for q in questions:
        out += ["", f"## Q{q.number}. {q.text}", ""]
        if q.final is None:
            out.append(f"_Not answered: {ending}._")
        elif q.final.fallback:
            out.append(f"_No final answer: {synthesiser.name} could not write one._")
        else:
            out += [f"**Final answer** ({synthesiser.name}):", "", q.final.text]
        if q.answers:
            out += ["", "### The panel's answers"]
        for a in q.answers:
            source = sources.get(a.speaker.id, "their document")
            text = f"_{a.text}_" if a.fallback else a.text
            out += ["", f"#### Round {a.round} · {a.speaker.name} · from {source}", "", text]
            if a.quotes:
                out.append("")
                out += [f"- “{c.text}” — {quote_mark(c.verified, source)}" for c in a.quotes]
    return "\n".join(out) + "\n"
