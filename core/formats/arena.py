"""arena: a rotating proposition speaker against one opposition; observers vote speakers off.

Each round is `exchanges_per_round` exchanges (proposition, then opposition), then a vote: the
clock pauses and every observer judges the active speaker at once. Replace wins only with a strict
majority; a tie goes to the people in the channel when they may break ties, else the speaker stays.
Whoever is voted in always speaks: no vote follows the last round, and a vote is held only when the
budget also covers the next speaker's turn. The clock counts debate time only; when it runs out,
the turn in progress finishes, no new vote starts, and the moderator sums up.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.budget import BudgetExhausted
from core.context import ContextBuilder
from core.errors import SpecError
from core.events import (
    ClockTick,
    CompletionReason,
    DebateStarted,
    Notice,
    PhaseChanged,
    SpeakerSwitched,
    VoteCast,
    VotingClosed,
    VotingStarted,
)
from core.formats.base import DebateFormat, MeteredCall, Outcome
from core.llm.agents import Decision
from core.models import CastMember, Persona, VoteOption, Voter
from core.ordered import each_in_order
from core.prompts import arena as prompts
from core.prompts import excerpt, persona_system
from core.settings import CoreSettings
from core.spec import parse_options
from core.state import TurnRecord
from core.turns import run_turn
from core.words import plural

KEEP = VoteOption(key="keep", label="Keep", emoji="✅")
REPLACE = VoteOption(key="replace", label="Replace", emoji="❌")
OPTIONS = (KEEP, REPLACE)

_STANCE = {"proposition": "for", "opposition": "against", "moderator": "moderator"}


class ArenaOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    duration: int = Field(300, ge=30, le=7200, description="debate time in seconds (votes excluded)")
    exchanges_per_round: int = Field(3, ge=1, le=10, description="exchanges before each vote")
    rounds: int | None = Field(
        None,
        ge=1,
        le=200,
        description="rounds (exchanges, then a vote; none after the last) before the moderator sums up",
    )
    first_speaker: str | None = Field(None, description="persona id from the pool; random if unset")
    humans: Literal["off", "tiebreak", "vote"] = Field("tiebreak", description="how people vote")
    human_window: int = Field(30, ge=5, le=600, description="seconds people have to vote")


class ArenaVote(BaseModel):
    """An observer's judgement of the active speaker."""

    vote: Literal["keep", "replace"]
    reason: str = Field(description="one sentence of reasoning")

    @field_validator("reason")
    @classmethod
    def _one_line(cls, value: str) -> str:
        flat = " ".join(value.split())
        return flat if len(flat) <= 300 else flat[:299] + "…"


def _label(turn: TurnRecord) -> str:
    return f"{turn.speaker.name}, {_STANCE.get(turn.role, turn.role)}"


def _all_played(rounds: int) -> str:
    return f"all {rounds} rounds were played" if rounds > 1 else "its one round was played"


def _clock_text(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 60}:{s % 60:02d}"


class Arena(DebateFormat):
    name = "arena"
    description = "Rotating proposition speakers face one opposition; observers vote speakers off."
    Options = ArenaOptions

    @classmethod
    def parse_options(cls, settings: CoreSettings, given: dict[str, Any]) -> ArenaOptions:
        a = settings.formats.arena
        defaults = {
            "duration": a.duration,
            "exchanges_per_round": a.exchanges_per_round,
            "humans": a.humans,
            "human_window": a.human_window,
        }
        options = parse_options(ArenaOptions, defaults, given)
        cap = settings.limits.max_rounds
        if options.rounds is not None and options.rounds > cap:
            raise SpecError(f"rounds must be at most {cap} (the configured cap; got {options.rounds})")
        if options.first_speaker is not None and options.first_speaker not in a.pool:
            raise SpecError(
                f"first_speaker {options.first_speaker!r} is not in the proposition pool"
                f" ({', '.join(a.pool)})"
            )
        return options

    @classmethod
    def roles(cls) -> list[str]:
        return ["proposition", "opposition", "observer", "moderator"]

    @classmethod
    def duration(cls, options: BaseModel) -> float | None:
        assert isinstance(options, ArenaOptions)
        return float(options.duration)

    @property
    def opts(self) -> ArenaOptions:
        assert isinstance(self.options, ArenaOptions)
        return self.options

    # --- the run -----------------------------------------------------------------------------

    async def run(self) -> Outcome:
        ctx = self.ctx
        conf = ctx.settings.formats.arena
        self.pool = [ctx.personas[pid] for pid in conf.pool]
        self.opposition = ctx.personas[conf.opposition]
        self.moderator = ctx.personas[conf.moderator]
        self.context = ContextBuilder(ctx.settings.context, label=_label)
        first_id = self.opts.first_speaker or ctx.rng("first-speaker").choice(conf.pool)
        active = ctx.personas[first_id]

        cast = [
            CastMember(persona=p.ref(), role="proposition" if p.id == active.id else "observer")
            for p in self.pool
        ]
        cast += [
            CastMember(persona=self.opposition.ref(), role="opposition"),
            CastMember(persona=self.moderator.ref(), role="moderator"),
        ]
        await ctx.emit(
            DebateStarted(
                format=self.name,
                topic=ctx.topic,
                cast=tuple(cast),
                settings={
                    **self.opts.model_dump(),
                    "first_speaker": active.id,
                    "max_rounds": self._round_cap(),
                },
            )
        )
        await ctx.emit(PhaseChanged(phase="debating", detail=f"{active.name} opens for the motion"))

        closing_system = persona_system(self.moderator, ctx.topic)
        ctx.set_aside_for_closing("moderator", "summary", closing_system)
        ending: tuple[CompletionReason, str] | None = None
        round_no = 1
        try:
            while ending is None:
                for _ in range(self.opts.exchanges_per_round):
                    for side in ("proposition", "opposition"):
                        ending = self._should_end()
                        if ending is not None:
                            break
                        speaker = active if side == "proposition" else self.opposition
                        await self._turn(speaker, side, round_no)
                    if ending is not None:
                        break
                    await self._tick()
                if ending is None:
                    ending = self._should_end()
                if ending is None and round_no >= self._round_cap():  # the last round: no vote after it
                    ending = ("max_rounds", _all_played(round_no))
                if ending is None:
                    active = await self._vote(round_no, active)
                    round_no += 1
        except BudgetExhausted:  # the next call would not fit: nothing of it was shown
            ending = self._budget_ending()
        return await self._conclude(*ending)

    def _round_cap(self) -> int:
        cap = self.ctx.settings.limits.max_rounds
        return min(cap, self.opts.rounds) if self.opts.rounds is not None else cap

    def _should_end(self) -> tuple[CompletionReason, str] | None:
        ctx = self.ctx
        if ctx.debate_clock.expired:
            return "time_up", f"time ran out after {_clock_text(ctx.debate_clock.elapsed)} of debate"
        if ctx.budget_spent():
            return self._budget_ending()
        return None

    def _budget_ending(self) -> tuple[CompletionReason, str]:
        return "budget", self.ctx.budget_note()

    async def _tick(self) -> None:
        c = self.ctx.debate_clock
        await self.ctx.emit(ClockTick(elapsed=c.elapsed, remaining=c.remaining, paused=c.paused))

    def _spoken(self) -> list[TurnRecord]:
        return [t for t in self.ctx.state.turns if t.role in ("proposition", "opposition")]

    def _next_turns(self, round_no: int) -> list[MeteredCall]:
        """The opening turn of `round_no` for each persona a vote could put on the floor."""
        context = self.context.build(self._spoken()).render()
        prompt = prompts.arena_proposition_turn(
            context, round_no=round_no, last_opposition=self._last("opposition")
        )
        topic = self.ctx.topic
        return [MeteredCall(p, "proposition", "turn", persona_system(p, topic), prompt) for p in self.pool]

    def _last(self, role: str) -> tuple[str, str] | None:
        for turn in reversed(self._spoken()):
            if turn.role == role:
                return turn.speaker.name, turn.text
        return None

    async def _turn(self, speaker: Persona, side: str, round_no: int) -> None:
        context = self.context.build(self._spoken()).render()
        if side == "proposition":
            prompt = prompts.arena_proposition_turn(
                context, round_no=round_no, last_opposition=self._last("opposition")
            )
            heading = f"Round {round_no} · for the motion"
        else:
            prompt = prompts.arena_opposition_turn(
                context, round_no=round_no, last_proposition=self._last("proposition")
            )
            heading = f"Round {round_no} · against the motion"
        await run_turn(
            self.ctx,
            speaker,
            role=side,
            round_no=round_no,
            heading=heading,
            prompt=prompt,
            system=persona_system(speaker, self.ctx.topic),
        )

    # --- voting ------------------------------------------------------------------------------

    async def _vote(self, round_no: int, active: Persona) -> Persona:
        ctx = self.ctx
        vote_id = f"v{round_no}"
        observers = [p for p in self.pool if p.id != active.id]
        mode = self.opts.humans
        recent = self.context.last_messages(self._spoken(), ctx.settings.formats.arena.vote_context_messages)
        prompt = prompts.arena_vote(
            recent, speaker=active.name, count=ctx.settings.formats.arena.vote_context_messages
        )
        # All the observers' votes reserved together, before the vote opens; and only if the budget
        # also covers the turn of whoever the vote puts on the floor (else no vote: nobody would speak).
        agents = ctx.metered_all(
            [MeteredCall(o, "observer", "vote", persona_system(o, ctx.topic), prompt) for o in observers],
            what="the observers' votes and the next speaker's turn",
            then=lambda: self._next_turns(round_no + 1),
        )
        ctx.debate_clock.pause()
        await self._tick()
        await ctx.emit(PhaseChanged(phase="voting", detail=f"Observers judge {active.name}"))
        await ctx.emit(
            VotingStarted(
                vote_id=vote_id,
                title=f"Should {active.name} keep the floor?",
                subject=active.ref(),
                options=OPTIONS,
                voters=tuple(p.ref() for p in observers),
                humans=mode,
            )
        )
        window = float(self.opts.human_window)
        async with asyncio.TaskGroup() as group:
            human = (
                group.create_task(ctx.ballots.run_window(vote_id, OPTIONS, window, "vote"))
                if mode == "vote"
                else None
            )
            group.create_task(
                each_in_order(
                    [agent.consult(prompt, ArenaVote) for agent in agents],
                    lambda i, outcome: self._record_vote(observers[i], vote_id, outcome),
                )
            )
        ballot = ctx.state.ballots[vote_id]
        keep = sum(1 for v in ballot.ai_votes.values() if v.choice == "keep")
        replace = sum(1 for v in ballot.ai_votes.values() if v.choice == "replace")
        tally: dict[str, float] = {"keep": keep, "replace": replace}
        human_tally: dict[str, int] = {}
        tie_broken_by: Literal["humans", "default"] | None = None
        note = ""
        if human is not None:
            human_tally = human.result()
            side = _majority(human_tally)
            if side is not None:
                tally[side] += 1
                note = f"The people's majority counted as one vote for {side}."
        if tally["keep"] == tally["replace"]:
            if mode == "tiebreak":
                human_tally = await ctx.ballots.run_window(vote_id, OPTIONS, window, "tie")
                side = _majority(human_tally)
            else:
                side = None
            if side is not None:
                decision, tie_broken_by = side, "humans"
                note = f"Tie broken by the people in the channel ({_tally_text(human_tally)})."
            else:
                decision, tie_broken_by = "keep", "default"
                note = "Tie: with no deciding human vote, the speaker stays."
        else:
            decision = "replace" if tally["replace"] > tally["keep"] else "keep"
        ctx.ballots.close(vote_id)
        label = f"{active.name} is replaced" if decision == "replace" else f"{active.name} keeps the floor"
        await ctx.emit(
            VotingClosed(
                vote_id=vote_id,
                tally=tally,
                human_tally=human_tally,
                decision=decision,
                decision_label=label,
                tie_broken_by=tie_broken_by,
                note=note,
            )
        )
        if decision == "replace":
            others = [p for p in self.pool if p.id != active.id]
            new = ctx.rng("switch", round_no).choice(others)
            await ctx.emit(
                SpeakerSwitched(
                    old=active.ref(),
                    new=new.ref(),
                    round=round_no,
                    reason=_switch_reason(tally, human_tally, tie_broken_by, ai=(replace, keep)),
                )
            )
            active = new
        ctx.debate_clock.resume()
        await ctx.emit(PhaseChanged(phase="debating", detail=f"{active.name} holds the floor"))
        await self._tick()
        return active

    async def _record_vote(self, observer: Persona, vote_id: str, outcome: Decision[ArenaVote] | str) -> None:
        ctx = self.ctx
        voter = Voter.of(observer.ref())
        if isinstance(outcome, str):  # a broken voter must never penalise the speaker
            await ctx.emit(
                VoteCast(
                    vote_id=vote_id,
                    voter=voter,
                    choice="keep",
                    reason="Could not vote; counted as keep.",
                    defaulted=True,
                )
            )
            await ctx.emit(
                Notice(
                    level="warning",
                    code="vote_failed",
                    message=f"{observer.name} could not vote ({outcome}); counted as keep.",
                )
            )
            return
        if outcome.value is None:
            await ctx.emit(
                Notice(
                    level="warning",
                    code="vote_dropped",
                    message=f"{observer.name}'s vote could not be read and was dropped:"
                    f" “{excerpt(outcome.raw, 120)}”",
                    usage=outcome.usage,
                )
            )
            return
        await ctx.emit(
            VoteCast(
                vote_id=vote_id,
                voter=voter,
                choice=outcome.value.vote,
                reason=outcome.value.reason,
                usage=outcome.usage,
            )
        )

    # --- the end -----------------------------------------------------------------------------

    async def _conclude(self, reason: CompletionReason, detail: str) -> Outcome:
        ctx = self.ctx
        ctx.debate_clock.pause()
        await ctx.emit(PhaseChanged(phase="concluding", detail=detail))
        await self._tick()
        c = ctx.debate_clock
        stats = ctx.state.statistics(debate_seconds=c.elapsed, paused_seconds=c.paused_total)
        figures = _figures(stats.model_dump(), self._spoken(), len(ctx.state.switches))
        if reason == "budget":
            return Outcome(reason, detail, summary=f"No summary: {detail}. {figures}")
        context = self.context.build(self._spoken()).render()
        try:  # covered by the reserve set aside for it, or not made at all
            turn = await run_turn(
                ctx,
                self.moderator,
                role="moderator",
                round_no=ctx.state.round,
                heading="Closing summary",
                prompt=prompts.arena_summary(context, ending=detail, figures=figures),
                system=persona_system(self.moderator, ctx.topic),
                kind="summary",
                closing=True,
            )
        except BudgetExhausted as refused:
            summary = f"No summary: the {refused.budget} budget could not cover one. {figures}"
            return Outcome(reason, detail, summary=summary)
        summary = turn.text if not turn.fallback else f"The moderator could not sum up. {figures}"
        return Outcome(reason, detail, summary=summary)


def _switch_reason(
    tally: dict[str, float],
    human_tally: dict[str, int],
    tie_broken_by: str | None,
    *,
    ai: tuple[int, int],
) -> str:
    """Who sent the speaker off, with the figures that decided it."""
    ai_replace, ai_keep = ai
    if tie_broken_by == "humans":
        people = f"{human_tally.get('replace', 0)}–{human_tally.get('keep', 0)}"
        return f"the people broke a {ai_replace}–{ai_keep} tie of the observers, voting {people} to replace"
    if human_tally and (tally["replace"], tally["keep"]) != (ai_replace, ai_keep):
        return (
            f"voted off {int(tally['replace'])}–{int(tally['keep'])}: the observers {ai_replace}–{ai_keep},"
            " the people's majority counted as one vote"
        )
    return f"voted off {ai_replace}–{ai_keep} by the observers' majority"


def _majority(tally: dict[str, int]) -> str | None:
    keep, replace = tally.get("keep", 0), tally.get("replace", 0)
    if keep == replace:
        return None
    return "keep" if keep > replace else "replace"


def _tally_text(tally: dict[str, int]) -> str:
    labels = {o.key: o.label.lower() for o in OPTIONS}
    return ", ".join(f"{labels.get(k, k)} {v}" for k, v in tally.items())


def _figures(stats: dict[str, Any], spoken: list[TurnRecord], switches: int) -> str:
    by_speaker: dict[str, int] = {}
    for turn in spoken:
        by_speaker[turn.speaker.name] = by_speaker.get(turn.speaker.name, 0) + 1
    speakers = ", ".join(f"{name} {n}" for name, n in by_speaker.items()) or "none"
    return (
        f"{plural(stats['turns'], 'turn')} over {plural(stats['rounds'], 'round')} ({speakers}); "
        f"{plural(switches, 'speaker switch')}; {int(stats['debate_seconds'])} s of debate."
    )
