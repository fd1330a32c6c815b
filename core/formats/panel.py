"""panel: panellists answer from their own documents, respond to each other, then a synthesis.

Each configured panellist gets one document (the first document goes to the first panellist, and so
on; panellists without a document sit out). Per question: in round 0 every panellist answers from
its own document only, all at once; in rounds 1..R each sees the answers so far (bounded) and
responds, all at once; then the synthesiser writes the final answer. Quotes a panellist gives are
checked against its document. The topic is the question, unless a question document is given: then
the synthesiser first draws N questions from it. The questions and final answers are posted as a
Markdown file at the end.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from core.budget import BudgetExhausted
from core.context import ContextBuilder
from core.documents import Document, check_document
from core.errors import ModelCallError, ModelOutage, SpecError
from core.events import (
    Artifact,
    CompletionReason,
    DebateStarted,
    Notice,
    PhaseChanged,
    TurnCompleted,
    TurnStarted,
)
from core.formats.base import DebateFormat, Outcome
from core.formats.panel_record import (
    PanelOptions,
    PanelQuestions,
    Question,
    Seat,
    about,
    clean_questions,
    joined_names,
    panel_markdown,
    quote_checker,
    read_all,
)
from core.models import CastMember, TokenUsage
from core.prompts import panel as prompts
from core.settings import CoreSettings
from core.spec import parse_options
from core.state import TurnRecord
from core.turns import TurnRequest, run_parallel_turns, run_turn

MAX_UNVERIFIED_SHOWN = 10


class Panel(DebateFormat):
    name = "panel"
    writes_files = True  # its report (an Artifact) is saved where the debate is shown
    description = "Panellists answer from their own documents, respond to each other, then a synthesis."
    Options = PanelOptions

    @classmethod
    def parse_options(cls, settings: CoreSettings, given: dict[str, Any]) -> PanelOptions:
        p = settings.formats.panel
        options = parse_options(PanelOptions, {"rounds": p.rounds, "questions": p.questions}, given)
        seats = len(p.agents)
        if len(options.documents) > seats:
            raise SpecError(
                f"The panel has {seats} panellists, so it takes at most {seats} documents"
                f" (one each); got {len(options.documents)}."
            )
        for document in options.documents:
            check_document(document, limit=p.max_document_chars)
        if options.question_document is not None:
            check_document(options.question_document, limit=p.max_document_chars)
        if not options.documents:
            if not p.documents:
                raise SpecError(
                    "The panel needs documents: attach one text or Markdown file per panellist"
                    f" (up to {seats})"
                )
            for path in p.documents:
                if not Path(path).expanduser().is_file():
                    raise SpecError(
                        f"The panel's configured document {path} cannot be found:"
                        " attach the documents instead"
                    )
        cap = settings.limits.max_rounds
        if options.rounds > cap:
            raise SpecError(f"rounds must be at most {cap} (the configured cap; got {options.rounds})")
        return options

    @classmethod
    def roles(cls) -> list[str]:
        return ["panellist", "synthesiser"]

    @property
    def opts(self) -> PanelOptions:
        assert isinstance(self.options, PanelOptions)
        return self.options

    # --- the run -----------------------------------------------------------------------------

    async def run(self) -> Outcome:
        ctx = self.ctx
        conf = ctx.settings.formats.panel
        self.synthesiser = ctx.personas[conf.synthesiser]
        self.synthesiser_system = prompts.synthesiser_system(self.synthesiser, ctx.topic)
        documents, problem = await self._documents()
        self.seats = [Seat(ctx.personas[pid], doc) for pid, doc in zip(conf.agents, documents, strict=False)]
        self.questions: list[Question] = []
        question_doc = self.opts.question_document

        cast = [CastMember(persona=s.persona.ref(), role="panellist") for s in self.seats]
        cast.append(CastMember(persona=self.synthesiser.ref(), role="synthesiser"))
        await ctx.emit(
            DebateStarted(
                format=self.name,
                topic=ctx.topic,
                cast=tuple(cast),
                settings={
                    "rounds": self.opts.rounds,
                    "questions": [] if question_doc is not None else [ctx.topic],
                    "generate_questions": self.opts.questions if question_doc is not None else 0,
                    "question_document": about(question_doc) if question_doc is not None else None,
                    "documents": [{**about(s.document), "panellist": s.persona.id} for s in self.seats],
                    "synthesiser": self.synthesiser.id,
                },
            )
        )
        if problem:
            await ctx.emit(Notice(level="error", code="document_refused", message=problem))
            return Outcome("failed", detail=problem)

        try:
            texts = [ctx.topic] if question_doc is None else await self._draw_questions(question_doc)
            self.questions = [Question(i, text) for i, text in enumerate(texts, start=1)]
            for question in self.questions:
                if not await self._answer(question):
                    return await self._conclude("budget", ctx.budget_note())
        except BudgetExhausted:  # the next call would not fit: nothing of it was shown
            return await self._conclude("budget", ctx.budget_note())
        done = len(self.questions)
        return await self._conclude("completed", f"{done} question{'s' if done != 1 else ''} answered")

    async def _documents(self) -> tuple[list[Document], str]:
        """The attached documents, or the configured ones read now (off the loop); or the problem."""
        if self.opts.documents:
            return list(self.opts.documents), ""
        conf = self.ctx.settings.formats.panel
        try:
            return await asyncio.to_thread(read_all, conf.documents, conf.max_document_chars), ""
        except SpecError as exc:
            return [], str(exc)

    async def _draw_questions(self, document: Document) -> list[str]:
        """The synthesiser's questions from the question document, shown as its turn; else the topic."""
        ctx = self.ctx
        count = self.opts.questions
        synth = self.synthesiser
        await ctx.emit(
            PhaseChanged(
                phase="preparing", detail=f"{synth.name} draws {count} questions from {document.name}"
            )
        )
        prompt = prompts.panel_questions(document, count=count)
        agent = ctx.metered(synth, "synthesiser", "summary", self.synthesiser_system, prompt)
        usage = TokenUsage()
        error = ""
        for _ in (1, 2):  # retried once, like a turn
            try:
                decision = await agent.decide(prompt, PanelQuestions)
            except (BudgetExhausted, ModelOutage):
                raise
            except Exception as exc:  # any model failure: retry once, then fall back to the topic
                error = exc.reason if isinstance(exc, ModelCallError) else str(exc) or type(exc).__name__
                continue
            usage = usage + decision.usage
            found = clean_questions(decision.value.questions if decision.value else [], count, ctx.settings)
            if found:
                turn_id = ctx.next_turn_id()
                await ctx.emit(
                    TurnStarted(
                        turn_id=turn_id,
                        speaker=synth.ref(),
                        role="synthesiser",
                        round=0,
                        heading=f"Questions from {document.name}",
                    )
                )
                await ctx.emit(
                    TurnCompleted(
                        turn_id=turn_id,
                        speaker=synth.ref(),
                        role="synthesiser",
                        round=0,
                        text="\n".join(f"Q{i}. {q}" for i, q in enumerate(found, start=1)),
                        usage=usage,
                    )
                )
                return found
            error = "its reply held no usable questions"
        await ctx.emit(
            Notice(
                level="warning",
                code="questions_failed",
                message=f"{synth.name} could not draw questions from {document.name} ({error});"
                f" the panel answers “{ctx.topic}” instead.",
                usage=usage,
            )
        )
        return [ctx.topic]

    async def _answer(self, question: Question) -> bool:
        """Every round of one question, then its synthesis; False when a budget ran out."""
        ctx = self.ctx
        q = f"Q{question.number}"
        for round_no in range(self.opts.rounds + 1):
            if ctx.budget_spent():
                return False
            if round_no == 0:
                detail = f"{q} · Round 0: each panellist answers from their own document"
            else:
                detail = f"{q} · Round {round_no}: the panellists respond to each other's answers"
            await ctx.emit(PhaseChanged(phase="answering" if round_no == 0 else "responding", detail=detail))
            requests = [self._request(seat, question, round_no) for seat in self.seats]
            question.answers += await run_parallel_turns(ctx, requests)
        if ctx.budget_spent():
            return False
        synth = self.synthesiser
        await ctx.emit(
            PhaseChanged(phase="synthesising", detail=f"{q} · {synth.name} writes the final answer")
        )
        unverified = [(a.speaker.name, c.text) for a in question.answers for c in a.quotes if not c.verified]
        question.final = await run_turn(
            ctx,
            synth,
            role="synthesiser",
            round_no=self.opts.rounds,
            heading=f"{q} · Synthesis",
            prompt=prompts.panel_synthesis(
                question.text,
                number=question.number,
                answers=self._answers_so_far(question, viewer=None),
                unverified=unverified[:MAX_UNVERIFIED_SHOWN],
            ),
            system=self.synthesiser_system,
            kind="summary",
        )
        return True

    def _request(self, seat: Seat, question: Question, round_no: int) -> TurnRequest:
        doc = seat.document
        if round_no == 0:
            prompt = prompts.panel_first_answer(question.text, number=question.number, document_name=doc.name)
            others = [question.text]
        else:
            prompt = prompts.panel_response(
                question.text,
                number=question.number,
                round_no=round_no,
                answers=self._answers_so_far(question, viewer=seat.persona.id),
                document_name=doc.name,
            )
            others = [question.text]
            others += [a.text for a in question.answers if a.speaker.id != seat.persona.id and not a.fallback]
        return TurnRequest(
            persona=seat.persona,
            role="panellist",
            round_no=round_no,
            heading=f"Q{question.number} · Round {round_no} · from {doc.name}",
            prompt=prompt,
            system=prompts.panellist_system(seat.persona, self.ctx.topic, doc),
            annotate=quote_checker(doc, others),
        )

    def _answers_so_far(self, question: Question, *, viewer: str | None) -> str:
        """This question's answers: the latest round verbatim (trimmed), earlier ones as a digest."""
        ids = {a.turn_id for a in question.answers if not a.fallback}
        turns = [t for t in self.ctx.state.turns if t.turn_id in ids]
        sources = {s.persona.id: s.document.name for s in self.seats}

        def label(turn: TurnRecord) -> str:
            you = " (you)" if turn.speaker.id == viewer else ""
            return f"{turn.speaker.name}{you}, from {sources.get(turn.speaker.id, 'their document')}"

        built = ContextBuilder(self.ctx.settings.context, label=label).build(turns, recent=len(self.seats))
        return built.render() if turns else "(No answers yet.)"

    # --- the end -----------------------------------------------------------------------------

    async def _conclude(self, reason: CompletionReason, detail: str) -> Outcome:
        ctx = self.ctx
        await ctx.emit(PhaseChanged(phase="concluding", detail=detail))
        name = f"panel-{ctx.debate_id}.md"
        if any(q.answers for q in self.questions):
            await ctx.emit(
                Artifact(
                    name=name,
                    media_type="text/markdown",
                    content=panel_markdown(
                        ctx.topic,
                        ctx.debate_id,
                        self.seats,
                        self.synthesiser,
                        self.questions,
                        ending=detail,
                        question_document=self.opts.question_document,
                    ),
                )
            )
        return Outcome(reason, detail, summary=self._account(reason, detail, name))

    def _account(self, reason: CompletionReason, detail: str, file: str) -> str:
        answered = sum(1 for q in self.questions if q.final is not None)
        total = len(self.questions)
        synth = self.synthesiser.name
        if answered == 0:
            finals = "no final answer was written"
        elif answered == total:
            finals = f"{synth} wrote the final answer" + (
                f"s to {'both' if total == 2 else f'all {total}'} questions" if total > 1 else ""
            )
        else:
            finals = f"{synth} wrote final answers to {answered} of {total} questions"
        rounds = self.opts.rounds + 1
        quotes = [c for q in self.questions for a in q.answers for c in a.quotes]
        verified = sum(1 for c in quotes if c.verified)
        speakers = joined_names([s.persona.name for s in self.seats])
        text = (
            f"{speakers} answered from their documents over {rounds}"
            f" round{'s' if rounds > 1 else ''} per question; {finals}. Quotes checked: {verified}"
            f" verified, {len(quotes) - verified} not found in the speaker's document."
        )
        if reason != "completed":
            text = f"The panel ended early: {detail}. {text}"
        return text + (f" The questions and answers are in {file}." if answered else "")
