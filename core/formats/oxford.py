"""oxford: a moderated two-sided debate that a judge closes with a verdict.

The moderator turns the motion into one focus question. Each round: the proposer argues for
(engaging the critic's last turn), the critic argues against (steelmanning the proposer first), the
moderator distils the round and sharpens the question, and the judge rules `continue` or `verdict`.
At the round cap the judge must rule. The judge reads an anonymised transcript (Side A / Side B, no
names, the A/B assignment drawn per debate) to limit name and position bias.

When people may vote, the audience votes on the motion before the opening and after the verdict;
the audience's winner is the side that gained the most votes, shown beside the judge's verdict.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.budget import BudgetExhausted
from core.context import ContextBuilder, trim
from core.errors import ModelCallError, SpecError
from core.events import DebateStarted, Notice, PhaseChanged, Verdict, VotingClosed, VotingStarted
from core.formats.base import DebateFormat, Outcome
from core.models import CastMember, Persona, VoteOption
from core.prompts import oxford as prompts
from core.prompts import persona_system
from core.research import find_sources
from core.settings import CoreSettings
from core.spec import parse_options
from core.state import TurnRecord
from core.turns import run_turn

FOR = VoteOption(key="for", label="For", emoji="👍")
AGAINST = VoteOption(key="against", label="Against", emoji="👎")
UNDECIDED = VoteOption(key="undecided", label="Undecided", emoji="🤷")
AUDIENCE_OPTIONS = (FOR, AGAINST, UNDECIDED)

Side = Literal["proposer", "critic", "draw"]


class OxfordOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(3, ge=1, le=10, description="rounds before the judge must rule")
    humans: Literal["off", "vote"] = Field("vote", description="the audience votes before and after")
    human_window: int = Field(60, ge=5, le=600, description="seconds for each audience vote")


class JudgeRuling(BaseModel):
    """The judge's decision after a round."""

    decision: Literal["continue", "verdict"]
    winner: Side | None = Field(None, description="proposer, critic or draw; required with a verdict")
    reasoning: str = Field(description="a few sentences: why, and what would have changed the ruling")

    @field_validator("reasoning")
    @classmethod
    def _bounded(cls, value: str) -> str:
        return trim(value, 1200)


def anonymise(text: str, names: dict[str, str]) -> str:
    """Replace each persona's full name and first name with a neutral label (whole words only)."""
    out = text
    for name, label in sorted(names.items(), key=lambda kv: -len(kv[0])):
        out = re.sub(rf"\b{re.escape(name)}\b", label, out, flags=re.IGNORECASE)
    return out


def audience_winner(before: dict[str, int], after: dict[str, int]) -> tuple[Side, int, int]:
    """The side whose vote count grew the most (gains may be negative); ties are a draw."""
    gain_for = after.get("for", 0) - before.get("for", 0)
    gain_against = after.get("against", 0) - before.get("against", 0)
    if gain_for == gain_against:
        return "draw", gain_for, gain_against
    return ("proposer" if gain_for > gain_against else "critic"), gain_for, gain_against


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


class Oxford(DebateFormat):
    name = "oxford"
    description = "A moderated two-sided debate: proposer, critic, moderator, and a judge who rules."
    Options = OxfordOptions

    @classmethod
    def parse_options(cls, settings: CoreSettings, given: dict[str, Any]) -> OxfordOptions:
        o = settings.formats.oxford
        cap = settings.limits.max_rounds
        defaults = {"rounds": min(o.max_rounds, cap), "humans": o.humans, "human_window": o.human_window}
        options = parse_options(OxfordOptions, defaults, given)
        if options.rounds > cap:
            raise SpecError(f"rounds must be at most {cap} (the configured cap; got {options.rounds})")
        return options

    @classmethod
    def roles(cls) -> list[str]:
        return ["proposer", "critic", "moderator", "judge"]

    @classmethod
    def uses_research(cls, settings: CoreSettings) -> bool:
        return settings.formats.oxford.research.enabled

    @property
    def opts(self) -> OxfordOptions:
        assert isinstance(self.options, OxfordOptions)
        return self.options

    def _round_cap(self) -> int:
        """The round at which the judge must rule: the option, within `limits.max_rounds`."""
        return min(self.opts.rounds, self.ctx.settings.limits.max_rounds)

    async def run(self) -> Outcome:
        ctx = self.ctx
        conf = ctx.settings.formats.oxford
        self.proposer = ctx.personas[conf.proposer]
        self.critic = ctx.personas[conf.critic]
        self.moderator = ctx.personas[conf.moderator]
        self.judge = ctx.personas[conf.judge]
        self.research = conf.research if conf.research.enabled else None
        self.research_calls = self.research.max_tool_calls if self.research is not None else 0
        self.context = ContextBuilder(ctx.settings.context, label=lambda t: f"{t.speaker.name}, {t.role}")
        # Which side the judge sees as "Side A" is drawn per debate, so first-position bias averages out.
        self.side_a: Literal["proposer", "critic"] = ctx.rng("side-a").choice(["proposer", "critic"])
        cast = [
            CastMember(persona=self.proposer.ref(), role="proposer"),
            CastMember(persona=self.critic.ref(), role="critic"),
            CastMember(persona=self.moderator.ref(), role="moderator"),
            CastMember(persona=self.judge.ref(), role="judge"),
        ]
        await ctx.emit(
            DebateStarted(
                format=self.name,
                topic=ctx.topic,
                cast=tuple(cast),
                settings={**self.opts.model_dump(), "research": bool(self.research_calls)},
            )
        )
        audience = self.opts.humans == "vote"
        before = await self._audience_vote("audience-before", "before the debate") if audience else {}

        await ctx.emit(PhaseChanged(phase="opening", detail=f"{self.moderator.name} frames the question"))
        opening = await run_turn(
            ctx,
            self.moderator,
            role="moderator",
            round_no=0,
            heading="Opening · the focus question",
            prompt=prompts.opening(topic=ctx.topic),
            system=persona_system(self.moderator, ctx.topic),
        )
        self.focus = opening.text if not opening.fallback else ctx.topic

        ruling: JudgeRuling | None = None
        round_no = 0
        reason: Literal["completed", "budget"] = "completed"
        rounds = self._round_cap()
        try:
            while ruling is None or ruling.decision == "continue":
                round_no += 1
                if ctx.budget_spent():
                    reason = "budget"
                    break
                await ctx.emit(PhaseChanged(phase="debating", detail=f"Round {round_no}"))
                await self._debater_turn(self.proposer, "proposer", round_no)
                await self._debater_turn(self.critic, "critic", round_no)
                await run_turn(
                    ctx,
                    self.moderator,
                    role="moderator",
                    round_no=round_no,
                    heading=f"Round {round_no} · distillation",
                    prompt=prompts.distillation(self._context(), focus=self.focus, round_no=round_no),
                    system=persona_system(self.moderator, ctx.topic),
                )
                ruling = await self._rule(round_no, must_rule=round_no >= rounds)
        except BudgetExhausted:  # the next call would not fit: nothing of it was shown
            reason = "budget"
            ruling = None
        verdict_label = self._label(ruling.winner if ruling and ruling.winner else "draw")
        summary = f"Judge: {verdict_label}." if ruling is not None else f"No verdict: {ctx.budget_note()}."
        if audience and reason != "budget":
            after = await self._audience_vote("audience-after", "after the verdict")
            side, gain_for, gain_against = audience_winner(before, after)
            label = self._label(side)
            await ctx.emit(
                Verdict(
                    title="Audience",
                    winner=side,
                    winner_label=label,
                    final=True,
                    reasoning=f"For {_signed(gain_for)}, against {_signed(gain_against)} between the votes"
                    " before and after the debate.",
                    tally={"for": float(gain_for), "against": float(gain_against)},
                )
            )
            summary += f" Audience: {label}."
        detail = f"the judge ruled after round {round_no}" if reason == "completed" else ctx.budget_note()
        return Outcome(reason, detail=detail, summary=summary)

    # --- turns -------------------------------------------------------------------------------

    def _spoken(self) -> list[TurnRecord]:
        return [t for t in self.ctx.state.turns if t.role in ("proposer", "critic", "moderator")]

    def _context(self) -> str:
        return self.context.build(self._spoken()).render()

    def _last(self, role: str) -> tuple[str, str] | None:
        for turn in reversed(self.ctx.state.turns):
            if turn.role == role:
                return turn.speaker.name, turn.text
        return None

    async def _debater_turn(self, persona: Persona, role: str, round_no: int) -> None:
        ctx = self.ctx
        calls = self.research_calls
        if role == "proposer":
            prompt = prompts.proposer_turn(
                self._context(),
                focus=self.focus,
                round_no=round_no,
                last_critic=self._last("critic"),
                research_calls=calls,
            )
            heading = f"Round {round_no} · for the motion"
        else:
            last = self._last("proposer") or (self.proposer.name, "")
            prompt = prompts.critic_turn(
                self._context(), focus=self.focus, round_no=round_no, last_proposer=last, research_calls=calls
            )
            heading = f"Round {round_no} · against the motion"
        await run_turn(
            ctx,
            persona,
            role=role,
            round_no=round_no,
            heading=heading,
            prompt=prompt,
            system=persona_system(persona, ctx.topic),
            research=self.research,
            # the links a turn cites are sources only when it could research (else just text)
            annotate=(lambda text: {"sources": find_sources(text)}) if self.research is not None else None,
        )

    # --- the judge -----------------------------------------------------------------------------

    def _side_labels(self) -> dict[str, str]:
        side_b = "critic" if self.side_a == "proposer" else "proposer"
        return {self.side_a: "Side A", side_b: "Side B", "moderator": "Moderator"}

    def _anonymous_names(self) -> dict[str, str]:
        """Every way a speaker may be named (full and first name) → a neutral label."""
        labels = self._side_labels()
        names: dict[str, str] = {}
        for persona, label in (
            (self.proposer, labels["proposer"]),
            (self.critic, labels["critic"]),
            (self.moderator, labels["moderator"]),
            (self.judge, "the judge"),
        ):
            names[persona.name] = label
            names[persona.name.split()[0]] = label
        return names

    def _anonymised_transcript(self) -> str:
        labels, names = self._side_labels(), self._anonymous_names()
        lines = []
        for turn in self._spoken():
            if turn.round == 0:
                continue
            text = anonymise(trim(turn.text, self.ctx.settings.context.max_turn_chars), names)
            lines.append(f"[Round {turn.round} · {labels[turn.role]}] {text}")
        return "\n\n".join(lines)

    async def _rule(self, round_no: int, *, must_rule: bool) -> JudgeRuling:
        ctx = self.ctx
        await ctx.emit(PhaseChanged(phase="judging", detail=f"{self.judge.name} considers round {round_no}"))
        side_a = "proposer (for the motion)" if self.side_a == "proposer" else "critic (against the motion)"
        prompt = prompts.judge(
            self._anonymised_transcript(),
            focus=anonymise(self.focus, self._anonymous_names()),
            round_no=round_no,
            side_a=side_a,
            must_rule=must_rule,
        )
        agent = ctx.metered(self.judge, "judge", "vote", persona_system(self.judge, ctx.topic), prompt)
        ruling: JudgeRuling | None = None
        problem = ""
        usage = None
        for _ in (1, 2):
            try:
                decision = await agent.decide(prompt, JudgeRuling)
            except BudgetExhausted:
                raise
            except Exception as exc:  # retried once, then the ruling falls back (below)
                problem = exc.reason if isinstance(exc, ModelCallError) else str(exc)
                continue
            usage = decision.usage
            if decision.value is not None:
                ruling = decision.value
                break
            problem = f"the ruling could not be read: “{trim(decision.raw, 120)}”"
        if ruling is None:
            await ctx.emit(
                Notice(
                    level="warning",
                    code="judge_failed",
                    message=f"{self.judge.name} could not rule ({problem}).",
                )
            )
            ruling = JudgeRuling(
                decision="verdict" if must_rule else "continue",
                winner="draw" if must_rule else None,
                reasoning="The judge could not rule" + ("; recorded as a draw." if must_rule else "."),
            )
        if ruling.decision == "verdict" and ruling.winner is None:
            ruling = ruling.model_copy(update={"winner": "draw"})
        if must_rule and ruling.decision == "continue":
            ruling = ruling.model_copy(update={"decision": "verdict", "winner": ruling.winner or "draw"})
            await ctx.emit(
                Notice(
                    level="info",
                    code="judge_capped",
                    message=f"Round {round_no} was the last: the judge's ruling stands as the verdict.",
                )
            )
        final = ruling.decision == "verdict"
        winner = ruling.winner if final else None
        await ctx.emit(
            Verdict(
                title="Verdict" if final else f"Round {round_no}: the debate continues",
                winner=winner,
                winner_label=self._label(winner) if winner else "Another round",
                reasoning=ruling.reasoning,
                by=self.judge.ref(),
                final=final,
                **({"usage": usage} if usage is not None else {}),
            )
        )
        return ruling

    def _label(self, side: str) -> str:
        if side == "proposer":
            return f"The proposer wins ({self.proposer.name}, for the motion)"
        if side == "critic":
            return f"The critic wins ({self.critic.name}, against the motion)"
        return "A draw"

    # --- the audience --------------------------------------------------------------------------

    async def _audience_vote(self, vote_id: str, when: str) -> dict[str, int]:
        ctx = self.ctx
        window = float(self.opts.human_window)
        await ctx.emit(PhaseChanged(phase="audience", detail=f"The audience votes {when}"))
        await ctx.emit(
            VotingStarted(
                vote_id=vote_id,
                title=f"Audience vote {when}: where do you stand on the motion?",
                options=AUDIENCE_OPTIONS,
                humans="vote",
            )
        )
        tally = await ctx.ballots.run_window(vote_id, AUDIENCE_OPTIONS, window, "vote")
        counted = {k: v for k, v in tally.items() if k != "undecided"}
        lead = (
            "none"
            if counted.get("for", 0) == counted.get("against", 0)
            else max(counted, key=lambda k: counted[k])
        )
        label = {
            "for": "More of the audience are for the motion",
            "against": "More are against the motion",
            "none": "The audience is split",
        }[lead]
        await ctx.emit(
            VotingClosed(
                vote_id=vote_id,
                tally={},
                human_tally=tally,
                decision=lead,
                decision_label=label,
                note=f"{sum(tally.values())} people voted.",
            )
        )
        return tally
