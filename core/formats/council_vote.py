"""council's vote: every member votes at once (structured output), the strategy decides, the
moderator or the people step in when it asks them to (see core.formats.council)."""

from __future__ import annotations

from collections.abc import Callable

from core.errors import ModelOutage
from core.events import Notice, PhaseChanged, VoteCast, VotingClosed, VotingStarted
from core.formats.base import DebateContext, MeteredCall
from core.formats.council_rules import (
    ABSTAIN,
    EMOJIS,
    STRATEGY_TEXT,
    VOTE_ID,
    CouncilOptions,
    MemberVote,
    ModeratorPick,
    Proposal,
    Ruling,
    TieBreaker,
    ballot_entries,
    choice_schema,
    failure_reason,
    joined_names,
    leaders,
    tally_votes,
)
from core.llm.agents import Decision
from core.models import Persona, TokenUsage, VoteOption, Voter
from core.ordered import each_in_order
from core.prompts import council as prompts
from core.prompts import excerpt


def _tie_how(score: str, broken_by: TieBreaker) -> str:
    """How a tied vote was decided: a tie is called a tie, never a majority."""
    decided = "broken by the people" if broken_by == "humans" else "the earliest proposal taken"
    return f"on a tie ({score} each), {decided}"


class CouncilVote:
    """The council's one vote on its proposals."""

    def __init__(
        self,
        ctx: DebateContext,
        opts: CouncilOptions,
        *,
        members: list[Persona],
        weights: dict[str, float],
        moderator: Persona | None,
        system: Callable[[Persona], str],
    ) -> None:
        self.ctx = ctx
        self.opts = opts
        self.members = members
        self.weights = weights
        self.moderator = moderator
        self._system = system

    async def run(self, proposals: list[Proposal]) -> Ruling:
        ctx, opts = self.ctx, self.opts
        limit = ctx.settings.formats.council.proposal_chars
        options = tuple(
            VoteOption(key=p.key, label=p.label, emoji=EMOJIS[i]) for i, p in enumerate(proposals)
        )
        voters = [*self.members, *([self.moderator] if self.moderator is not None else [])]
        entries = ballot_entries(proposals)
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
                detail=f"{len(self.members)} members are voting ({STRATEGY_TEXT[opts.strategy]})…",
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
        how = STRATEGY_TEXT[strategy]
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
            notes.append(f"{len(abstained)} abstained ({joined_names(abstained)}).")
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
            proposals=ballot_entries(proposals),
            votes="\n".join(lines),
            limit=ctx.settings.formats.council.proposal_chars,
        )
        try:
            agent = ctx.metered(moderator, "moderator", "vote", self._system(moderator), prompt)
            decision = await agent.decide(prompt, choice_schema(ModeratorPick, list(by_key)))
        except ModelOutage:
            raise
        except Exception as exc:  # the members' votes still decide (also when the budget cannot cover it)
            await ctx.emit(
                Notice(
                    level="warning",
                    code="moderator_failed",
                    message=f"{moderator.name} could not choose ({failure_reason(exc)});"
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
        names = joined_names([p.author.name for p in tied])
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
