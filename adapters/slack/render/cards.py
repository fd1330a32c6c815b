"""The cards of a debate in Slack, as mrkdwn and Block Kit (pure): the opening card the thread hangs
from, a vote card per ballot, and the closing statistics card. Everything from a person or a model is
escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from adapters.ballot_words import clicking
from adapters.results import ENDINGS
from adapters.slack.ballots.buttons.blocks import ballot_block
from adapters.slack.ballots.windows import closes_at, span, time_left
from adapters.slack.controls.blocks import card_controls
from adapters.slack.render.blocks import MAX_BLOCKS, capped, context, section, sections
from adapters.slack.render.emoji import option_mark, option_reactions
from adapters.slack.render.ops import Block
from adapters.slack.render.text import escape, model_text
from core.events import DebateCompleted, HumanVoteOpened, VoteCast, VotingClosed, VotingStarted
from core.formats.arena import OPTIONS as ARENA_OPTIONS
from core.formats.council import ABSTAIN
from core.formats.council import EMOJIS as COUNCIL_EMOJIS
from core.formats.oxford import AUDIENCE_OPTIONS
from core.models import CastMember, PersonaRef, Statistics, VoteOption
from core.pricing import cost_suffix
from core.transcript import minutes

ROLE_TEXT = {
    "proposition": "for the motion",
    "opposition": "against the motion",
    "observer": "observes and votes",
    "moderator": "moderates",
    "judge": "judges (reading the debate anonymised)",
    "proposer": "for the motion",
    "critic": "against the motion, steelmanning the proposer first",
    "council": "proposes, revises and votes",
    "panellist": "answers from their own document",
    "synthesiser": "writes the final answer",
}
HUMANS_TEXT = {
    "off": "AI votes only",
    "tiebreak": "people break ties",
    "vote": "people vote too",
}
STRATEGY_TEXT = {
    "majority": "the most votes wins",
    "weighted": "votes weighted by expertise",
    "consensus": "seeking consensus, else by majority",
    "moderator": "the moderator decides, the votes advise",
}
ONE_VOTE_EACH = "One vote each: your newest reaction counts; removing it withdraws your vote."
HOW_TO_VOTE = {
    "off": "*Voting:* the AI voters decide on the vote cards in the thread; people watch.",
    "tiebreak": "*How to vote:* when the AI voters tie on a vote card in the thread, you decide: react"
    f" on the card with one of its emoji. {ONE_VOTE_EACH}",
    "vote": f"*How to vote:* react on the vote cards in the thread with one of their emoji. {ONE_VOTE_EACH}",
}


def plural(count: int, word: str) -> str:
    """`1 turn`, `2 turns`, `3 switches`."""
    if count == 1:
        return f"1 {word}"
    return f"{count:,} {word}{'es' if word.endswith('ch') else 's'}"


def either(items: Sequence[str], joiner: str = "or") -> str:
    """`a`, `a or b`, `a, b or c`."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {joiner} {items[-1]}"


def options_text(options: Sequence[VoteOption]) -> str:
    """How to react for each option: `✅ Keep or ❌ Replace` (the Slack reaction, then the label)."""
    reactions = option_reactions(options)
    return either([f"{option_mark(o, reactions[o.key])} {escape(o.label)}" for o in options])


# --- the opening card ------------------------------------------------------------------------------


def _settings_line(fmt: str, settings: Mapping[str, Any]) -> str:
    bits = [f"Format *{escape(fmt)}*"]
    humans = settings.get("humans")
    rounds = settings.get("rounds")
    if fmt == "oxford":
        if isinstance(rounds, int):
            bits.append(f"up to {plural(rounds, 'round')}, the judge rules after each")
        if settings.get("research"):
            bits.append("debaters may search the web")
        bits.append("the audience votes before and after" if humans == "vote" else "no audience vote")
        return " · ".join(bits)
    if fmt == "council":
        if isinstance(rounds, int):
            bits.append(f"{plural(rounds, 'revision round')}" if rounds else "no revision rounds")
        strategy = settings.get("strategy")
        if isinstance(strategy, str):
            bits.append(escape(STRATEGY_TEXT.get(strategy, strategy)))
        bits.append("people break ties" if humans == "tiebreak" else "a tie goes to the earliest proposal")
        return " · ".join(bits)
    if fmt == "panel":
        drawn = settings.get("generate_questions")
        source = settings.get("question_document")
        if isinstance(drawn, int) and drawn and isinstance(source, Mapping):
            bits.append(f"{plural(drawn, 'question')} drawn from {escape(str(source.get('name', '')))}")
        else:
            bits.append("one question")
        if isinstance(rounds, int):
            bits.append(f"{plural(rounds, 'round')} of responses" if rounds else "answers only, no responses")
        documents = settings.get("documents")
        if isinstance(documents, list):
            bits.append(plural(len(documents), "document"))
        return " · ".join(bits)
    if isinstance(settings.get("duration"), int | float):
        bits.append(f"{minutes(float(settings['duration']))} of debate")
    exchanges = settings.get("exchanges_per_round")
    if isinstance(exchanges, int):
        bits.append("a vote after each exchange" if exchanges == 1 else f"a vote every {exchanges} exchanges")
    rounds = rounds or settings.get("max_rounds")
    if isinstance(rounds, int):
        bits.append(f"up to {plural(rounds, 'round')}")
    if isinstance(humans, str) and humans in HUMANS_TEXT:
        bits.append(HUMANS_TEXT[humans])
    return " · ".join(bits)


def _role_text(fmt: str, member: CastMember, settings: Mapping[str, Any]) -> str:
    role = member.role
    if fmt == "panel" and role == "panellist":
        for document in settings.get("documents") or []:
            if isinstance(document, Mapping) and document.get("panellist") == member.persona.id:
                chars = document.get("chars")
                size = f", {chars:,} characters" if isinstance(chars, int) else ""
                return f"answers from {escape(str(document.get('name', '')))}{size}"
    if fmt == "council" and role == "council" and settings.get("strategy") == "weighted":
        weights = settings.get("weights")
        weight = weights.get(member.persona.id) if isinstance(weights, Mapping) else None
        if isinstance(weight, int | float):
            return f"{ROLE_TEXT['council']} (expertise weight {weight:g})"
    if fmt == "council" and role == "moderator":
        return "picks the proposal the council adopts"
    if fmt == "oxford" and role == "moderator":
        return "frames the focus question and distils each round"
    return escape(ROLE_TEXT.get(role, role))


def how_to_vote(fmt: str, settings: Mapping[str, Any], cast: Sequence[CastMember] = ()) -> str | None:
    """The opening card's word on voting, for the format and its settings."""
    humans = settings.get("humans")
    window = settings.get("human_window")
    within = f" within {span(window)}" if isinstance(window, int) else ""
    if fmt == "arena":
        choices = options_text(ARENA_OPTIONS)
        lead = "After each round but the last the observers vote on whether the speaker keeps the floor"
        if humans == "tiebreak":
            return (
                f"*How to vote:* {lead}. If they tie, *you decide*: react on the vote card with"
                f" {choices}{within}. {ONE_VOTE_EACH}"
            )
        if humans == "vote":
            return (
                f"*How to vote:* {lead}, and *you vote too*: react on the vote card with {choices}"
                f"{within}; the people's majority counts as one more vote. {ONE_VOTE_EACH}"
            )
        return f"*Voting:* {lead}; only they decide, people watch."
    if fmt == "oxford":
        if humans == "vote":
            return (
                "*How to vote:* you are the audience. Vote on the motion before the debate and again"
                f" after the verdict: react on each audience card with {options_text(AUDIENCE_OPTIONS)}"
                f"{within}. The side that gains the most votes wins the audience, beside the judge's"
                f" verdict. {ONE_VOTE_EACH}"
            )
        return "*Voting:* no audience vote this time; the judge rules."
    if fmt == "council":
        numbers = ", ".join(COUNCIL_EMOJIS[:3])
        lead = "The members vote on the proposals (or abstain) on a vote card"
        if humans == "tiebreak":
            return (
                f"*How to vote:* {lead}. If they tie, *you break the tie*: react with a tied"
                f" proposal's number ({numbers}, …){within}; the card says which proposals are"
                f" tied, and only those count. {ONE_VOTE_EACH}"
            )
        return f"*Voting:* {lead}; only they decide, and a tie goes to the earliest proposal."
    if fmt == "panel":
        synthesiser = next((m.persona.name for m in cast if m.role == "synthesiser"), "the synthesiser")
        return (
            "*Nothing to vote on:* each panellist answers from their own document, and every quote is"
            f" checked against it (✔ verified, ✘ not found). Then {escape(synthesiser)} writes the"
            " final answer; the questions and answers come as a Markdown file at the end."
        )
    if isinstance(humans, str):
        return HOW_TO_VOTE.get(humans)
    return None


def opening_card(
    *,
    topic: str,
    fmt: str,
    status: str,
    cast: tuple[CastMember, ...] = (),
    settings: Mapping[str, Any] | None = None,
    live: bool = True,
    buttons: bool = False,
) -> tuple[str, tuple[Block, ...]]:
    """The channel message the debate's thread hangs from: topic, format, cast, how to vote, status,
    and its buttons (Stop and Status only while `live`)."""
    settings = settings or {}
    blocks: list[Block] = [section(f"*🎤 Debate:* {escape(topic)}"), context(_settings_line(fmt, settings))]
    if cast:
        blocks.extend(
            sections(
                [
                    f"{m.persona.emoji} *{escape(m.persona.name)}* — {_role_text(fmt, m, settings)}"
                    for m in cast
                ]
            )
        )
    voting = how_to_vote(fmt, settings, cast) if cast else None
    if voting and buttons:  # people vote with the vote cards' buttons (adapters/ballot_words.py)
        voting = clicking(voting)
    if voting:
        blocks.append(section(voting))
    blocks.append(context(status))
    blocks = [*capped(blocks)][: MAX_BLOCKS - 1]
    blocks.append(card_controls(live=live))  # adapters/slack/controls/blocks.py
    return f"Debate: {escape(topic)}", tuple(blocks)


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

    @property
    def open_keys(self) -> list[str]:
        """The options people may vote for: during a tie, only the tied ones."""
        options = self.window.options if self.window is not None else self.started.options
        return [o.key for o in options if self.option(o.key) is not None]

    @property
    def narrowed(self) -> bool:
        return len(self.open_keys) < len(self.started.options)

    def marks(self, keys: Sequence[str] | None = None, joiner: str = "or") -> str:
        return either([self.choice_text(k) for k in (self.open_keys if keys is None else keys)], joiner)

    def tally_text(self, tally: Mapping[str, float], keys: Sequence[str] | None = None) -> str:
        if keys is None:
            keys = [o.key for o in self.started.options] + [k for k in tally if self.option(k) is None]
        return " · ".join(f"{self.choice_text(k)} {tally.get(k, 0):g}" for k in keys)

    def people_tally(self) -> dict[str, int]:
        counts = dict.fromkeys(self.open_keys, 0)
        for choice in self.people.values():
            counts[choice] = counts.get(choice, 0) + 1
        return counts


def _ai_line(ballot: BallotView, voter: PersonaRef | None, vote: VoteCast | None) -> str:
    if vote is not None:
        who = f"{vote.voter.emoji} *{escape(vote.voter.name)}*".strip()
        if vote.choice == ABSTAIN and ballot.option(ABSTAIN) is None:
            line = f"{who} abstains"
        else:
            line = f"{who} → {ballot.choice_text(vote.choice)}"
        if vote.reason:
            line += f" — {escape(vote.reason)}"
        return line + (" _(counted by default)_" if vote.defaulted else "")
    assert voter is not None
    waiting = "_no vote_" if ballot.closed is not None else "_thinking…_"
    return f"{voter.emoji} {escape(voter.name)} {waiting}"


def _people_line(ballot: BallotView, *, buttons: bool = False, now: datetime | None = None) -> str:
    mode = ballot.started.humans
    react, react_ = ("click", "Click") if buttons else ("react with", "React with")
    if ballot.closed is not None:
        return "Voting is closed." if mode != "off" else ""
    if ballot.window is not None:
        seconds = int(ballot.window.window)
        if ballot.window.reason == "tie" and ballot.narrowed:
            others = "the other options don't count" if buttons else "reactions for other options don't count"
            lead = (
                f"*It's a tie between {ballot.marks(joiner='and')}: people decide!* {react_} one of"
                f" them within {span(seconds)}; {others}."
            )
        elif ballot.window.reason == "tie":
            lead = f"*It's a tie: people decide!* {react_} {ballot.marks()} within {span(seconds)}."
        elif ballot.started.voters:
            lead = (
                f"*People vote too* ({seconds} s): {react} {ballot.marks()}."
                " The people's majority counts as one more vote."
            )
        else:
            lead = f"*Your vote* ({seconds} s): {react} {ballot.marks()}."
        counts = ballot.tally_text(ballot.people_tally(), ballot.open_keys)
        rule = "your last click counts" if buttons else "your newest reaction counts"
        when = closes_at(ballot.window) + time_left(ballot.window, now)
        return f"{lead} One vote each; {rule}.\nPeople so far: {counts}{when}"
    if mode == "tiebreak":
        return f"If the AI voters tie, people decide: {react} {ballot.marks()}."
    if mode == "vote":
        who = "People vote too" if ballot.started.voters else "Your vote"
        return f"{who}: {react} {ballot.marks()} when voting opens."
    return ""


def vote_card(
    ballot: BallotView, *, buttons: bool = False, now: datetime | None = None
) -> tuple[str, tuple[Block, ...]]:
    """`buttons`: people vote with the card's buttons (adapters/slack/ballot_buttons.py), not reactions.
    `now`: the moment the card is drawn for; an open window then says how long is left."""
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
        result = [f"*Result: {escape(closed.decision_label)}*"]
        if started.voters or closed.tally:
            result.append(f"AI: {ballot.tally_text(closed.tally)}")
        if any(closed.human_tally.values()) or closed.tie_broken_by == "humans" or not started.voters:
            keys = ballot.open_keys if ballot.window is not None else None
            result.append(f"People: {ballot.tally_text(closed.human_tally, keys)}")
        if closed.note:
            result.append(f"_{escape(closed.note)}_")
        blocks.append(section("\n".join(result)))
    people = _people_line(ballot, buttons=buttons, now=now)
    if people:
        blocks.append(context(people))
    if buttons and ballot.window is not None and closed is None:  # people vote with buttons
        shown = []
        for key in ballot.open_keys:
            option = ballot.option(key)
            if option is not None:
                shown.append((key, f"{option_mark(option, ballot.reactions[key])} {option.label}"))
        block = ballot_block(started.vote_id, shown, ballot.people_tally())
        blocks = [*blocks[: MAX_BLOCKS - 1], block]
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
        f" · {plural(stats.switches, 'switch')}{stats.switch_deciders()} · debate time"
        f" {minutes(stats.debate_seconds)} (+{minutes(stats.paused_seconds)} paused for votes)"
        f" · {stats.tokens.total:,} tokens{cost_suffix(stats.tokens)}"
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
