"""The cards of a debate in Slack, as mrkdwn and Block Kit (pure): the opening card the thread hangs
from, a vote card per ballot, and the closing statistics card. Everything from a person or a model is
escaped here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapters.slack.blocks import capped, context, section, sections
from adapters.slack.emoji import option_mark
from adapters.slack.ops import Block
from adapters.slack.text import escape, model_text
from core.events import DebateCompleted, HumanVoteOpened, VoteCast, VotingClosed, VotingStarted
from core.models import CastMember, PersonaRef, Statistics, VoteOption
from core.transcript import minutes

ROLE_TEXT = {
    "proposition": "for the motion",
    "opposition": "against the motion",
    "observer": "observes and votes",
    "moderator": "moderates",
    "judge": "judges",
    "proposer": "for the motion",
    "critic": "against the motion",
    "council": "council member",
    "panellist": "panellist",
    "synthesiser": "writes the synthesis",
}
HUMANS_TEXT = {
    "off": "AI votes only",
    "tiebreak": "people break ties",
    "vote": "people vote too",
}
HOW_TO_VOTE = {
    "off": "*Voting:* the AI voters decide on the vote cards in the thread; people watch.",
    "tiebreak": "*How to vote:* when the AI voters tie on a vote card in the thread, you decide: react"
    " on the card with one of its emoji. One vote each; your newest reaction counts; removing it"
    " withdraws your vote.",
    "vote": "*How to vote:* react on the vote cards in the thread with one of their emoji. One vote"
    " each; your newest reaction counts; removing it withdraws your vote.",
}
ENDINGS = {
    "completed": "the debate ran its course",
    "time_up": "time ran out",
    "max_rounds": "all rounds were played",
    "budget": "the token budget was spent",
    "stopped": "stopped",
    "failed": "it hit an error",
    "interrupted": "the bot shut down mid-debate",
}


def plural(count: int, word: str) -> str:
    """`1 turn`, `2 turns`, `3 switches`."""
    if count == 1:
        return f"1 {word}"
    return f"{count:,} {word}{'es' if word.endswith('ch') else 's'}"


# --- the opening card ------------------------------------------------------------------------------


def _settings_line(fmt: str, settings: dict[str, Any]) -> str:
    bits = [f"Format *{escape(fmt)}*"]
    if isinstance(settings.get("duration"), int | float):
        bits.append(f"{minutes(float(settings['duration']))} of debate")
    exchanges = settings.get("exchanges_per_round")
    if isinstance(exchanges, int):
        bits.append("a vote after each exchange" if exchanges == 1 else f"a vote every {exchanges} exchanges")
    rounds = settings.get("rounds") or settings.get("max_rounds")
    if isinstance(rounds, int):
        bits.append(f"up to {plural(rounds, 'round')}")
    humans = settings.get("humans")
    if isinstance(humans, str) and humans in HUMANS_TEXT:
        bits.append(HUMANS_TEXT[humans])
    return " · ".join(bits)


def opening_card(
    *,
    topic: str,
    fmt: str,
    status: str,
    cast: tuple[CastMember, ...] = (),
    settings: dict[str, Any] | None = None,
) -> tuple[str, tuple[Block, ...]]:
    """The channel message the debate's thread hangs from: topic, format, cast, how to vote, status."""
    settings = settings or {}
    blocks: list[Block] = [section(f"*🎤 Debate:* {escape(topic)}"), context(_settings_line(fmt, settings))]
    if cast:
        blocks.extend(
            sections(
                [
                    f"{m.persona.emoji} *{escape(m.persona.name)}* — {escape(ROLE_TEXT.get(m.role, m.role))}"
                    for m in cast
                ]
            )
        )
    humans = settings.get("humans")
    if isinstance(humans, str) and humans in HOW_TO_VOTE:
        blocks.append(section(HOW_TO_VOTE[humans]))
    blocks.append(context(status))
    return f"Debate: {escape(topic)}", capped(blocks)


def pending_card(topic: str, fmt: str) -> tuple[str, tuple[Block, ...]]:
    """The opening card before the debate has started (posted first, so the thread exists)."""
    return opening_card(topic=topic, fmt=fmt, status="⏳ Seating the cast…")


# --- vote cards ----------------------------------------------------------------------------------


@dataclass
class BallotView:
    started: VotingStarted
    reactions: dict[str, str]
    ai: dict[str, VoteCast] = field(default_factory=dict)
    people: dict[str, str] = field(default_factory=dict)
    window: HumanVoteOpened | None = None
    closed: VotingClosed | None = None

    def option(self, key: str) -> VoteOption | None:
        return next((o for o in self.started.options if o.key == key), None)

    def choice_text(self, key: str) -> str:
        option = self.option(key)
        if option is None:
            return escape(key)
        return f"{option_mark(option, self.reactions[key])} {escape(option.label)}"

    def marks(self) -> str:
        return " or ".join(self.choice_text(o.key) for o in self.started.options)

    def tally_text(self, tally: dict[str, float] | dict[str, int]) -> str:
        keys = [o.key for o in self.started.options] + [k for k in tally if self.option(k) is None]
        return " · ".join(f"{self.choice_text(k)} {tally.get(k, 0):g}" for k in keys)

    def people_tally(self) -> dict[str, int]:
        counts = {o.key: 0 for o in self.started.options}
        for choice in self.people.values():
            counts[choice] = counts.get(choice, 0) + 1
        return counts


def _ai_line(ballot: BallotView, voter: PersonaRef | None, vote: VoteCast | None) -> str:
    if vote is not None:
        who = f"{vote.voter.emoji} *{escape(vote.voter.name)}*".strip()
        line = f"{who} → {ballot.choice_text(vote.choice)}"
        if vote.reason:
            line += f" — {escape(vote.reason)}"
        return line + (" _(counted by default)_" if vote.defaulted else "")
    assert voter is not None
    waiting = "_no vote_" if ballot.closed is not None else "_thinking…_"
    return f"{voter.emoji} {escape(voter.name)} {waiting}"


def _people_line(ballot: BallotView) -> str:
    mode = ballot.started.humans
    if ballot.closed is not None:
        return "Voting is closed." if mode != "off" else ""
    if ballot.window is not None:
        seconds = int(ballot.window.window)
        if ballot.window.reason == "tie":
            lead = f"*It's a tie: people decide!* React with {ballot.marks()} within {seconds} s."
        elif ballot.started.voters:
            lead = (
                f"*People vote too* ({seconds} s): react with {ballot.marks()}."
                " The people's majority counts as one more vote."
            )
        else:
            lead = f"*Your vote* ({seconds} s): react with {ballot.marks()}."
        counts = ballot.tally_text(ballot.people_tally())
        return f"{lead} One vote each; your newest reaction counts.\nPeople so far: {counts}"
    if mode == "tiebreak":
        return f"If the AI voters tie, people decide: react with {ballot.marks()}."
    if mode == "vote":
        return f"People vote too: react with {ballot.marks()} when voting opens."
    return ""


def vote_card(ballot: BallotView) -> tuple[str, tuple[Block, ...]]:
    started = ballot.started
    head = f"*🗳️ {escape(started.title)}*"
    if started.subject is not None:
        head += f"\nJudging {started.subject.emoji} *{escape(started.subject.name)}*"
    lines = [_ai_line(ballot, voter, ballot.ai.get(voter.id)) for voter in started.voters]
    listed = {v.id for v in started.voters}
    lines += [_ai_line(ballot, None, vote) for vid, vote in ballot.ai.items() if vid not in listed]
    blocks: list[Block] = [section(head), *sections(lines)]
    closed = ballot.closed
    if closed is not None:
        result = [f"*Result: {escape(closed.decision_label)}*", f"AI: {ballot.tally_text(closed.tally)}"]
        if any(closed.human_tally.values()) or closed.tie_broken_by == "humans":
            result.append(f"People: {ballot.tally_text(closed.human_tally)}")
        if closed.note:
            result.append(f"_{escape(closed.note)}_")
        blocks.append(section("\n".join(result)))
    people = _people_line(ballot)
    if people:
        blocks.append(context(people))
    return f"Vote: {escape(started.title)}", capped(blocks)


# --- the closing card ----------------------------------------------------------------------------


def stats_table(stats: Statistics) -> str:
    judged = any(p.judged for p in stats.per_persona)
    header = ["Persona", "Turns", "Words"] + (["Judged", "Keep", "Replace"] if judged else [])
    rows = [header]
    for p in stats.per_persona:
        row = [p.persona.name[:20], str(p.turns), str(p.words)]
        if judged:
            row += [str(p.judged), str(p.votes_keep), str(p.votes_replace)]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row))
        for row in rows
    ]
    return escape("\n".join(lines))


def stats_line(stats: Statistics) -> str:
    return (
        f"{plural(stats.rounds, 'round')} · {plural(stats.turns, 'turn')} · {plural(stats.words, 'word')}"
        f" · {plural(stats.votes, 'AI vote')} · {plural(stats.human_votes, 'human vote')}"
        f" · {plural(stats.switches, 'switch')} · debate time"
        f" {minutes(stats.debate_seconds)} (+{minutes(stats.paused_seconds)} paused for votes)"
        f" · {stats.tokens.total:,} tokens"
    )


def ending_text(event: DebateCompleted) -> str:
    return event.detail or ENDINGS.get(event.reason, event.reason)


def closing_card(event: DebateCompleted, *, last_moderator_text: str) -> tuple[str, tuple[Block, ...]]:
    """The end: why it ended, the summary when the moderator's last turn did not already say it,
    and the statistics."""
    ending = escape(ending_text(event))
    blocks: list[Block] = [section(f"*🏁 The end* · {ending}")]
    summary = event.summary.strip()
    if summary and summary != last_moderator_text.strip():
        blocks.extend(sections(["*Summary*", *model_text(summary).split("\n")]))
    blocks.append(section(f"*Statistics*\n```{stats_table(event.stats)}```"))
    blocks.append(context(stats_line(event.stats)))
    return f"The end: {ending}", capped(blocks)
