"""council: members propose answers at once, critique and revise them at once, then vote on one.

The topic is the question the council answers. Round 0: every member proposes at once. Rounds
1..R: each member sees the others' latest proposals (trimmed) and revises, all at once; under the
consensus strategy the rounds stop early once the proposals converge. Then every member votes for
one proposal or abstains (structured output) and the strategy decides:

- majority: the most votes.
- weighted: the most expertise weight (each vote counts its member's weight).
- consensus: the proposal every voting member chose (abstainers stand aside); otherwise majority,
  and the result says so.
- moderator: the moderator picks, having seen the members' votes (which are advice only).

A tie goes to the people in the channel when they may break ties (they choose among the tied
proposals only), else, as when they leave it tied, the earliest of the tied proposals wins.

Members may vote for their own proposal, as in the source design: after the revision rounds a
member who still judges their own proposal best should say so, and the prompt asks for honesty.

Failures: a proposal turn that fails twice becomes a fallback line with a notice, and the member's
previous proposal stands (no proposal at all keeps them off the ballot, not out of the vote). A vote
that fails or cannot be read counts as an abstention, with a notice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.budget import BudgetExhausted
from core.errors import SpecError
from core.events import DebateStarted, Notice, PhaseChanged, TurnCompleted, Verdict
from core.formats.base import DebateFormat, Outcome
from core.formats.council_rules import (
    ABSTAIN,
    EMOJIS,
    CouncilOptions,
    Proposal,
    Ruling,
    closeness,
    similarity,
)
from core.formats.council_vote import CouncilVote
from core.models import CastMember, Persona
from core.prompts import council as prompts
from core.prompts import persona_system
from core.settings import CoreSettings
from core.spec import parse_options
from core.turns import TurnRequest, run_parallel_turns

__all__ = ["ABSTAIN", "EMOJIS", "Council", "CouncilOptions", "closeness", "similarity"]


class Council(DebateFormat):
    name = "council"
    description = "Members propose answers at once, critique and revise them, then vote on one."
    Options = CouncilOptions

    @classmethod
    def parse_options(cls, settings: CoreSettings, given: dict[str, Any]) -> CouncilOptions:
        c = settings.formats.council
        cap = settings.limits.max_rounds
        defaults = {
            "rounds": min(c.rounds, cap),  # a configured default is capped; a request above it is refused
            "strategy": c.strategy,
            "humans": c.humans,
            "human_window": c.human_window,
        }
        options = parse_options(CouncilOptions, defaults, given)
        if options.rounds > cap:
            raise SpecError(f"rounds must be at most {cap} (the configured cap; got {options.rounds})")
        if options.strategy == "moderator" and c.moderator is None:
            raise SpecError(
                "The moderator strategy needs a moderator: set formats.council.moderator in config,"
                " or choose majority, weighted or consensus."
            )
        return options

    @classmethod
    def roles(cls) -> list[str]:
        return ["council", "moderator"]

    @property
    def opts(self) -> CouncilOptions:
        assert isinstance(self.options, CouncilOptions)
        return self.options

    # --- the run -----------------------------------------------------------------------------

    async def run(self) -> Outcome:
        ctx = self.ctx
        conf = ctx.settings.formats.council
        self.members = [ctx.personas[seat.persona] for seat in conf.agents]
        self.weights = {seat.persona: seat.weight for seat in conf.agents}
        acting = self.opts.strategy == "moderator" and conf.moderator is not None
        self.moderator = ctx.personas[conf.moderator] if acting and conf.moderator else None
        self.latest: dict[str, TurnCompleted] = {}

        cast_ = [CastMember(persona=m.ref(), role="council") for m in self.members]
        if self.moderator is not None:
            cast_.append(CastMember(persona=self.moderator.ref(), role="moderator"))
        await ctx.emit(
            DebateStarted(
                format=self.name,
                topic=ctx.topic,
                cast=tuple(cast_),
                settings={
                    **self.opts.model_dump(),
                    "weights": self.weights,
                    "moderator": self.moderator.id if self.moderator is not None else None,
                },
            )
        )

        played, converged = 0, False
        try:
            await self._propose()
            for round_no in range(1, self.opts.rounds + 1):
                if ctx.budget_spent():
                    return await self._out_of_budget(played)
                if self.opts.strategy == "consensus" and await self._converged(played):
                    converged = True
                    break
                await self._revise(round_no)
                played = round_no
            if ctx.budget_spent():
                return await self._out_of_budget(played)
            proposals = self._ballot()
            if not proposals:
                return Outcome("failed", "no member could make a proposal")
            vote = CouncilVote(
                ctx,
                self.opts,
                members=self.members,
                weights=self.weights,
                moderator=self.moderator,
                system=self._system,
            )
            ruling = await vote.run(proposals)
        except BudgetExhausted:  # the next call would not fit: nothing of it was shown
            return await self._out_of_budget(played)
        detail = f"the council voted after {played} revision round{'' if played == 1 else 's'}"
        if converged:
            detail += ", the proposals having converged"
        return await self._conclude(ruling, detail)

    def _system(self, persona: Persona) -> str:
        return persona_system(persona, self.ctx.topic)

    async def _speak(self, round_no: int, heading: str, prompt_of: Mapping[str, str]) -> None:
        requests = [
            TurnRequest(
                persona=m,
                role="council",
                round_no=round_no,
                heading=f"Round {round_no} · {heading}",
                prompt=prompt_of[m.id],
                system=self._system(m),
            )
            for m in self.members
        ]
        for turn in await run_parallel_turns(self.ctx, requests):
            if not turn.fallback:  # a failed revision leaves the previous proposal standing
                self.latest[turn.speaker.id] = turn

    async def _propose(self) -> None:
        n = len(self.members)
        await self.ctx.emit(PhaseChanged(phase="proposing", detail=f"{n} members are drafting proposals…"))
        prompt = prompts.proposal(question=self.ctx.topic, members=n)
        await self._speak(0, "proposal", {m.id: prompt for m in self.members})

    async def _revise(self, round_no: int) -> None:
        ctx, rounds = self.ctx, self.opts.rounds
        limit = ctx.settings.formats.council.proposal_chars
        await ctx.emit(
            PhaseChanged(
                phase="revising",
                detail=f"Round {round_no} of {rounds}: {len(self.members)} members are revising"
                " their proposals…",
            )
        )
        prompt_of: dict[str, str] = {}
        for member in self.members:
            own = self.latest.get(member.id)
            others = [(t.speaker.name, t.text) for pid, t in self.latest.items() if pid != member.id]
            prompt_of[member.id] = prompts.revision(
                question=ctx.topic,
                round_no=round_no,
                rounds=rounds,
                own=own.text if own is not None else None,
                others=others,
                limit=limit,
            )
        await self._speak(round_no, "revision", prompt_of)

    async def _converged(self, after_round: int) -> bool:
        """Consensus only: stop revising once every pair of latest proposals overlaps enough."""
        threshold = self.ctx.settings.formats.council.convergence
        score = closeness([t.text for t in self.latest.values()])
        if score < threshold:
            return False
        await self.ctx.emit(
            Notice(
                level="info",
                code="converged",
                message=f"The proposals converged after round {after_round} (word overlap {score:.0%},"
                f" threshold {threshold:.0%}): no more revision rounds; the council votes now.",
            )
        )
        return True

    def _ballot(self) -> list[Proposal]:
        """Each member's latest proposal, numbered in seat order (p1 is the earliest)."""
        standing = [(m, self.latest[m.id]) for m in self.members if m.id in self.latest]
        return [Proposal(key=f"p{i}", author=m, text=t.text) for i, (m, t) in enumerate(standing, 1)]

    # --- the end -----------------------------------------------------------------------------

    async def _conclude(self, ruling: Ruling, detail: str) -> Outcome:
        ctx = self.ctx
        await ctx.emit(PhaseChanged(phase="concluding", detail=detail))
        winner = ruling.winner
        await ctx.emit(
            Verdict(
                title="Council decision",
                winner=winner.key,
                winner_label=winner.label,
                reasoning=winner.text,
                by=ruling.by.ref() if ruling.by is not None else None,
                tally=ruling.tally,
            )
        )
        summary = " ".join(
            [f"Asked “{ctx.topic}”, the council adopted {winner.label} {ruling.how}.", *ruling.notes]
        )
        return Outcome("completed", detail, summary=summary)

    async def _out_of_budget(self, played: int) -> Outcome:
        detail = self.ctx.budget_note()
        await self.ctx.emit(PhaseChanged(phase="concluding", detail=detail))
        summary = (
            f"No decision: {detail} after round {played}, before the vote."
            f" {len(self.latest)} proposals stand in the transcript."
        )
        return Outcome("budget", detail, summary=summary)
