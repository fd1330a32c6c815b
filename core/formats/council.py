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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from core.budget import BudgetExhausted
from core.context import trim
from core.errors import ModelCallError, SpecError
from core.events import (
    DebateStarted,
    Notice,
    PhaseChanged,
    TurnCompleted,
    Verdict,
    VoteCast,
    VotingClosed,
    VotingStarted,
)
from core.formats.base import DebateFormat, MeteredCall, Outcome
from core.llm.agents import Decision
from core.models import CastMember, Persona, TokenUsage, VoteOption, Voter
from core.ordered import each_in_order
from core.prompts import council as prompts
from core.prompts import excerpt, persona_system
from core.settings import CoreSettings
from core.spec import parse_options
from core.turns import TurnRequest, run_parallel_turns

ABSTAIN = "abstain"
EMOJIS = ("1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣")
VOTE_ID = "v1"

Strategy = Literal["majority", "weighted", "consensus", "moderator"]
TieBreaker = Literal["humans", "default"]

_STRATEGY_TEXT = {
    "majority": "by majority",
    "weighted": "by expertise-weighted vote",
    "consensus": "seeking consensus",
    "moderator": "the moderator decides",
}


class CouncilOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(2, ge=0, le=5, description="critique-and-revise rounds after the proposals")
    strategy: Strategy = Field("majority", description="majority | weighted | consensus | moderator")
    humans: Literal["off", "tiebreak"] = Field("tiebreak", description="whether people break ties")
    human_window: int = Field(30, ge=5, le=600, description="seconds people have to break a tie")


def _tie_how(score: str, broken_by: TieBreaker) -> str:
    """How a tied vote was decided: a tie is called a tie, never a majority."""
    decided = "broken by the people" if broken_by == "humans" else "the earliest proposal taken"
    return f"on a tie ({score} each), {decided}"


class MemberVote(BaseModel):
    """A member's vote: a proposal's key or "abstain" (`choice_schema` narrows it to the ballot)."""

    choice: str
    reason: str = Field(description="one sentence of reasoning")

    @field_validator("reason")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return trim(value, 300)


class ModeratorPick(MemberVote):
    """The moderator's choice: a proposal's key (no abstaining)."""


V = TypeVar("V", bound=MemberVote)


def choice_schema(base: type[V], keys: Sequence[str]) -> type[V]:
    """`base` with `choice` limited to `keys`, so a model (or a rehearsal) can only name a real option."""
    allowed: Any = cast(Any, Literal)[tuple(keys)]
    return create_model(
        base.__name__,
        __base__=base,
        choice=(allowed, Field(description=f"one of: {', '.join(keys)}")),
    )


# --- convergence -------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be been but by can could do does for from had has have i if in into is it its"
        " me my no not of on or our should so than that the their them then there these they this to"
        " was we were what when which while who will with would you your",
    )
)


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS)


def similarity(a: str, b: str) -> float:
    """Word overlap of two texts: shared content words over all their content words (0 to 1)."""
    wa, wb = content_words(a), content_words(b)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def closeness(texts: Sequence[str]) -> float:
    """How far a set of proposals agrees: the least similar pair's overlap (0 for fewer than two)."""
    if len(texts) < 2:
        return 0.0
    return min(similarity(a, b) for a, b in combinations(texts, 2))


# --- counting ----------------------------------------------------------------------------------


def tally_votes(
    votes: Mapping[str, str], keys: Sequence[str], weights: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Votes (voter id → choice) per proposal key; abstentions count for nothing."""
    tally = dict.fromkeys(keys, 0.0)
    for voter, choice in votes.items():
        if choice in tally:
            tally[choice] += weights[voter] if weights is not None else 1.0
    return {k: round(v, 6) for k, v in tally.items()}  # 1.5 + 1.2 must equal 2.7


def leaders(tally: Mapping[str, float]) -> list[str]:
    """The keys with the top count, in ballot order (so the first is the earliest proposal)."""
    best = max(tally.values(), default=0.0)
    return [k for k, v in tally.items() if v == best]


def _entries(proposals: Sequence[Proposal]) -> list[prompts.Entry]:
    return [(p.key, p.author.name, p.text) for p in proposals]


def _why(exc: Exception) -> str:
    return exc.reason if isinstance(exc, ModelCallError) else str(exc) or type(exc).__name__


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class Proposal:
    """A member's latest proposal, as it stands on the ballot."""

    key: str
    author: Persona
    text: str

    @property
    def label(self) -> str:
        return f"{self.author.name}'s proposal"


@dataclass(frozen=True)
class Ruling:
    """How the vote came out. `how` reads after "the council adopted X"; `explain` says how the
    tally was counted (shown on the vote card, not repeated in the summary)."""

    winner: Proposal
    tally: dict[str, float]
    how: str
    notes: tuple[str, ...]
    explain: str = ""
    human_tally: dict[str, int] = field(default_factory=dict)
    tie_broken_by: TieBreaker | None = None
    by: Persona | None = None


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
            ruling = await self._vote(proposals)
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

    # --- the vote ------------------------------------------------------------------------------

    async def _vote(self, proposals: list[Proposal]) -> Ruling:
        ctx, opts = self.ctx, self.opts
        limit = ctx.settings.formats.council.proposal_chars
        options = tuple(
            VoteOption(key=p.key, label=p.label, emoji=EMOJIS[i]) for i, p in enumerate(proposals)
        )
        voters = [*self.members, *([self.moderator] if self.moderator is not None else [])]
        entries = _entries(proposals)
        schema = choice_schema(MemberVote, [*(p.key for p in proposals), ABSTAIN])
        own = {p.author.id: p.key for p in proposals}
        prompt_for = {
            m.id: prompts.vote(question=ctx.topic, proposals=entries, own_key=own.get(m.id), limit=limit)
            for m in self.members
        }
        agents = ctx.metered_all(  # every member's vote reserved together, before the vote opens
            [MeteredCall(m, "council", "vote", self._system(m), prompt_for[m.id]) for m in self.members],
            what="the members' votes",
        )
        await ctx.emit(
            PhaseChanged(
                phase="voting",
                detail=f"{len(self.members)} members are voting ({_STRATEGY_TEXT[opts.strategy]})…",
            )
        )
        await ctx.emit(
            VotingStarted(
                vote_id=VOTE_ID,
                title="Which proposal should the council adopt?",
                options=options,
                voters=tuple(p.ref() for p in voters),
                humans=opts.humans,
            )
        )
        cast_votes = await each_in_order(
            [agent.consult(prompt_for[m.id], schema) for agent, m in zip(agents, self.members, strict=True)],
            lambda i, outcome: self._record_vote(self.members[i], outcome),
        )
        ruling = await self._decide(proposals, options, cast_votes)
        await ctx.emit(
            VotingClosed(
                vote_id=VOTE_ID,
                tally=ruling.tally,
                human_tally=ruling.human_tally,
                decision=ruling.winner.key,
                decision_label=f"{ruling.winner.label} wins",
                tie_broken_by=ruling.tie_broken_by,
                note=" ".join(n for n in (ruling.explain, *ruling.notes) if n),
            )
        )
        return ruling

    async def _decide(
        self, proposals: list[Proposal], options: tuple[VoteOption, ...], cast_votes: list[VoteCast]
    ) -> Ruling:
        """Apply the strategy to the members' votes (asking the moderator or the people if needed)."""
        strategy = self.opts.strategy
        by_key = {p.key: p for p in proposals}
        keys = list(by_key)
        votes = {v.voter.id: v.choice for v in cast_votes}
        heads = tally_votes(votes, keys)
        weighted = strategy == "weighted"
        tally = tally_votes(votes, keys, self.weights) if weighted else heads
        notes: list[str] = []
        winner: str | None = None
        by: Persona | None = None
        how = _STRATEGY_TEXT[strategy]
        if strategy == "consensus":
            chosen = {c for c in votes.values() if c != ABSTAIN}
            if len(chosen) == 1:
                winner, how = chosen.pop(), "by consensus"
                notes.append("Unanimous: the council reached consensus.")
            else:
                how = "by majority"
                notes.append("No consensus: fell back to majority.")
        elif self.moderator is not None:
            winner = await self._moderator_pick(proposals, cast_votes)
            if winner is not None:
                by, how = self.moderator, f"on the choice of {self.moderator.name}, the moderator"
                notes.append(f"{self.moderator.name} decides as moderator; the members' votes are advice.")
            else:
                how = "by majority"
                notes.append("The moderator could not decide: fell back to majority.")

        tie_broken_by: TieBreaker | None = None
        human_tally: dict[str, int] = {}
        if winner is None:
            top = leaders(tally)
            winner = top[0]
            if len(top) > 1:
                winner, tie_broken_by, human_tally, tie_note = await self._break_tie(
                    [by_key[k] for k in top], options
                )
                notes.append(tie_note)
        if by is None:
            score = (
                f"{tally[winner]:g} of {sum(self.weights.values()):g} weight"
                if weighted
                else f"{tally[winner]:g} of {len(self.members)} votes"
            )
            how = _tie_how(score, tie_broken_by) if tie_broken_by is not None else f"{how} ({score})"
        explain = ""
        if weighted:
            explain = (
                "Votes weighted by expertise: "
                + ", ".join(f"{m.name} {self.weights[m.id]:g}" for m in self.members)
                + "."
            )
            by_heads = leaders(heads)
            if len(by_heads) == 1 and by_heads[0] != winner:
                notes.append(f"By head count, {by_key[by_heads[0]].label} led.")
        abstained = [v.voter.name for v in cast_votes if v.choice == ABSTAIN]
        if abstained:
            notes.append(f"{len(abstained)} abstained ({_names(abstained)}).")
        return Ruling(by_key[winner], tally, how, tuple(notes), explain, human_tally, tie_broken_by, by)

    async def _record_vote(self, member: Persona, outcome: Decision[MemberVote] | str) -> VoteCast:
        """One member's vote; a failed or unreadable vote is an abstention, with a notice."""
        voter = Voter.of(member.ref())
        if isinstance(outcome, str):  # a broken voter abstains; the council still decides
            message = f"{member.name} could not vote ({outcome}); counted as an abstention."
            return await self._abstain(voter, "Could not vote", "vote_failed", message)
        if outcome.value is None:
            message = (
                f"{member.name}'s vote could not be read and counts as an abstention:"
                f" “{excerpt(outcome.raw, 120)}”"
            )
            return await self._abstain(voter, "Vote unreadable", "vote_unreadable", message, outcome.usage)
        return await self.ctx.emit(
            VoteCast(
                vote_id=VOTE_ID,
                voter=voter,
                choice=outcome.value.choice,
                reason=outcome.value.reason,
                usage=outcome.usage,
            )
        )

    async def _abstain(
        self, voter: Voter, what: str, code: str, message: str, usage: TokenUsage | None = None
    ) -> VoteCast:
        cast_vote = await self.ctx.emit(
            VoteCast(
                vote_id=VOTE_ID,
                voter=voter,
                choice=ABSTAIN,
                reason=f"{what}; counted as an abstention.",
                defaulted=True,
                usage=usage or TokenUsage(),
            )
        )
        await self.ctx.emit(Notice(level="warning", code=code, message=message))
        return cast_vote

    async def _moderator_pick(self, proposals: list[Proposal], votes: list[VoteCast]) -> str | None:
        """The moderator's choice, cast on the ballot; None (with a notice) if there is none."""
        ctx, moderator = self.ctx, self.moderator
        assert moderator is not None
        by_key = {p.key: p for p in proposals}
        lines = [
            f"- {v.voter.name}: "
            + (f"{v.choice} ({by_key[v.choice].label})" if v.choice in by_key else "abstained")
            + (f" — {v.reason}" if v.reason else "")
            for v in votes
        ]
        prompt = prompts.moderator_pick(
            question=ctx.topic,
            proposals=_entries(proposals),
            votes="\n".join(lines),
            limit=ctx.settings.formats.council.proposal_chars,
        )
        try:
            agent = ctx.metered(moderator, "moderator", "vote", self._system(moderator), prompt)
            decision = await agent.decide(prompt, choice_schema(ModeratorPick, list(by_key)))
        except Exception as exc:  # the members' votes still decide (also when the budget cannot cover it)
            await ctx.emit(
                Notice(
                    level="warning",
                    code="moderator_failed",
                    message=f"{moderator.name} could not choose ({_why(exc)});"
                    " the members' majority decides.",
                )
            )
            return None
        if decision.value is None:
            await ctx.emit(
                Notice(
                    level="warning",
                    code="moderator_unreadable",
                    message=f"{moderator.name}'s choice could not be read; the members' majority decides:"
                    f" “{excerpt(decision.raw, 120)}”",
                    usage=decision.usage,
                )
            )
            return None
        await ctx.emit(
            VoteCast(
                vote_id=VOTE_ID,
                voter=Voter.of(moderator.ref()),
                choice=decision.value.choice,
                reason=decision.value.reason,
                usage=decision.usage,
            )
        )
        return decision.value.choice

    async def _break_tie(
        self, tied: list[Proposal], options: tuple[VoteOption, ...]
    ) -> tuple[str, TieBreaker, dict[str, int], str]:
        """People choose among the tied proposals when they may; otherwise the earliest wins.

        Returns the winning key, who broke the tie, the people's tally and a note saying so.
        """
        names = _names([p.author.name for p in tied])
        first = tied[0]
        if self.opts.humans == "off":
            return first.key, "default", {}, f"Tie between the proposals of {names}: the earliest wins."
        keys = [p.key for p in tied]
        window = tuple(o for o in options if o.key in keys)
        counts = await self.ctx.ballots.run_window(VOTE_ID, window, float(self.opts.human_window), "tie")
        people = {k: counts.get(k, 0) for k in keys}  # picks outside the tie do not count
        top = leaders(people)
        if len(top) == 1 and people[top[0]] > 0:
            said = ", ".join(f"{p.author.name} {people[p.key]}" for p in tied)
            return (
                top[0],
                "humans",
                people,
                f"Tie between the proposals of {names}: the people broke it ({said}).",
            )
        return (
            first.key,
            "default",
            people,
            f"Tie between the proposals of {names}; the people left it tied, so the earliest wins.",
        )

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
