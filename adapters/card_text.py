"""What the cards say, written once for every front end (pure): counts and lists, what each member
of the cast does, a debate's settings, how people take part in each format, and the closing figures.

The words are the same in Discord, Slack and the terminal; each front end only writes them its own
way (`Markup`: its emphasis, its escaping, how it names a ballot's choices).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.events import DebateStarted
from core.formats.arena import OPTIONS as ARENA_OPTIONS
from core.formats.council import EMOJIS as COUNCIL_EMOJIS
from core.formats.oxford import AUDIENCE_OPTIONS
from core.models import CastMember, Statistics, VoteOption, fallback_counts
from core.pricing import cost_suffix
from core.transcript import minutes
from core.words import plural as plural

ROLE_TEXT = {
    "proposition": "for the motion",
    "opposition": "against the motion",
    "observer": "observes and votes",
    "moderator": "moderates and sums up",
    "judge": "rules on the debate (reading it anonymised)",
    "proposer": "for the motion",
    "critic": "against the motion, steelmanning the proposer first",
    "council": "proposes, revises and votes",
    "panellist": "answers from their own document",
    "synthesiser": "writes the final answer",
}
STRATEGY_TEXT = {
    "majority": "the most votes wins",
    "weighted": "votes weighted by expertise",
    "consensus": "seeking consensus, else by majority",
    "moderator": "the moderator decides, the votes advise",
}
ONE_VOTE_EACH = "One vote each: your newest reaction still on the card counts."
HUMANS_TEXT = {
    "off": "AI votes only",
    "tiebreak": "people break ties",
    "vote": "people vote too",
}
"""How people vote, as the line under a debate's card says it."""
HUMANS_CHOICES = {
    "off": "AI votes only; people watch",
    "tiebreak": "People break the AI voters' ties",
    "vote": "People vote too",
}
"""How people vote, as a start form's choices name it (Discord's `humans` option, Slack's modal)."""


def either(items: Sequence[str], joiner: str = "or") -> str:
    """`a`, `a or b`, `a, b or c`."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {joiner} {items[-1]}"


def span(seconds: int) -> str:
    """`30 s`, `90 s`, `2 min`, `2 min 30 s`: seconds up to two minutes, then minutes."""
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 2:
        return f"{int(seconds)} s"
    return f"{minutes} min" + (f" {rest} s" if rest else "")


def role_text(fmt: str, member: CastMember, settings: Mapping[str, Any]) -> str:
    """What a member of the cast does in this debate (plain text: the front end escapes it)."""
    role = member.role
    if fmt == "panel" and role == "panellist":
        for document in settings.get("documents") or []:
            if isinstance(document, Mapping) and document.get("panellist") == member.persona.id:
                chars = document.get("chars")
                size = f", {chars:,} characters" if isinstance(chars, int) else ""
                if document.get("name"):
                    return f"answers from {document['name']}{size}"
    if fmt == "council" and role == "council" and settings.get("strategy") == "weighted":
        weights = settings.get("weights")
        weight = weights.get(member.persona.id) if isinstance(weights, Mapping) else None
        if isinstance(weight, int | float):
            return f"{ROLE_TEXT['council']} (expertise weight {weight:g})"
    if fmt == "council" and role == "moderator":
        return "picks the proposal the council adopts"
    if fmt == "oxford" and role == "moderator":
        return "frames the focus question and distils each round"
    return ROLE_TEXT.get(role, role)


@dataclass(frozen=True)
class Markup:
    """How a front end writes what the shared words need."""

    strong: Callable[[str], str]
    escape: Callable[[str], str]  # a name from the configuration, shown as written
    choices: Callable[[Sequence[VoteOption]], str]  # `✅ keep or ❌ replace`, in the front end's marks
    em: Callable[[str], str] = lambda text: text  # a quiet aside (`thinking…`)
    model: Callable[[str], str] = lambda text: text  # text a model wrote (a vote's reason)


def _every(exchanges: object) -> str:
    if exchanges == 1 or not isinstance(exchanges, int):
        return "After each exchange but the last"
    return f"After every {exchanges} exchanges but the last"


def how_to_take_part(
    fmt: str, settings: Mapping[str, Any], cast: Sequence[CastMember], mark: Markup
) -> tuple[str, str] | None:
    """The opening card's word on voting, as (heading, text), for the format and its settings."""
    humans = settings.get("humans")
    window = settings.get("human_window")
    within = f" within {span(window)}" if isinstance(window, int) and window else ""
    if fmt == "arena":
        choices = mark.choices(ARENA_OPTIONS)
        lead = (
            f"{_every(settings.get('exchanges_per_round'))} the observers vote on whether the speaker"
            " keeps the floor, on a vote card in the thread"
        )
        if humans == "tiebreak":
            return "How to vote", (
                f"{lead}. If they tie, {mark.strong('you decide')}: react {choices} on the vote card"
                f"{within}. {ONE_VOTE_EACH}"
            )
        if humans == "vote":
            return "How to vote", (
                f"{lead}, and {mark.strong('you vote too')}: react {choices} on each vote card{within};"
                f" the people's majority counts as one more vote. {ONE_VOTE_EACH}"
            )
        return "Who decides", f"{lead}; only they decide, people watch."
    if fmt == "oxford":
        if humans == "vote":
            return "How to vote", (
                f"{mark.strong('You are the audience')}: vote on the motion before the debate and"
                f" again after the verdict, reacting {mark.choices(AUDIENCE_OPTIONS)} on each audience"
                f" card{within}. The side that gains the most votes wins the audience, shown beside the"
                f" judge's verdict. {ONE_VOTE_EACH}"
            )
        return "Who decides", "The judge rules on the debate; there is no audience vote this time."
    if fmt == "council":
        strategy = str(settings.get("strategy", "majority"))
        how = mark.escape(STRATEGY_TEXT.get(strategy, strategy))
        lead = f"The members vote on the proposals or abstain ({how}), on a vote card in the thread"
        if humans == "tiebreak":
            return "How to vote", (
                f"{lead}. If they tie, {mark.strong('you break the tie')}: react with a tied proposal's"
                f" number ({', '.join(COUNCIL_EMOJIS[:3])}, …) on the vote card{within}; the card says which"
                f" proposals are tied, and only those count. {ONE_VOTE_EACH}"
            )
        return "Who decides", f"{lead}; only they decide, and a tie goes to the earliest proposal."
    if fmt == "panel":
        synthesiser = next((m.persona.name for m in cast if m.role == "synthesiser"), "the synthesiser")
        return "How it works", (
            "Nothing to vote on: each panellist answers from their own document, and every quote is"
            f" checked against it (✔ verified, ✘ not found). Then {mark.escape(synthesiser)} writes the"
            " final answer; the questions and answers come as a Markdown file at the end."
        )
    if humans in ("tiebreak", "vote"):
        return "How to vote", f"React on the vote cards{within} with one of their emoji. {ONE_VOTE_EACH}"
    if humans == "off":
        return "Who decides", "The AI voters decide on the vote cards in the thread; people watch."
    return None


def settings_text(fmt: str, settings: Mapping[str, Any], escape: Callable[[str], str]) -> list[str]:
    """The debate's settings that matter for its format, as short phrases (`up to 2 rounds`, …)."""
    bits: list[str] = []
    humans = settings.get("humans")
    rounds = settings.get("rounds")
    if fmt == "oxford":
        if isinstance(rounds, int):
            bits.append(f"up to {plural(rounds, 'round')}, the judge rules after each")
        if settings.get("research"):
            bits.append("debaters may search the web")
        bits.append("the audience votes before and after" if humans == "vote" else "no audience vote")
        return bits
    if fmt == "council":
        if isinstance(rounds, int):
            bits.append(f"{plural(rounds, 'revision round')}" if rounds else "no revision rounds")
        strategy = settings.get("strategy")
        if isinstance(strategy, str):
            bits.append(escape(STRATEGY_TEXT.get(strategy, strategy)))
        bits.append("people break ties" if humans == "tiebreak" else "a tie goes to the earliest proposal")
        return bits
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
        return bits
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
    return bits


def figures(stats: Statistics, started: DebateStarted | None) -> list[str]:
    """The closing figures that mean something for the debate (a zero only where it could have been
    more: no switches outside the arena, no people's votes where people had none), what a failing
    model left, the time and the spending."""
    fmt = started.format if started is not None else ""
    people = started is not None and started.settings.get("humans") not in (None, "off")
    counts = [plural(stats.rounds, "round")] if stats.rounds else []
    counts += [plural(stats.turns, "turn"), plural(stats.words, "word")]
    if stats.votes or fmt in ("arena", "council"):
        counts.append(plural(stats.votes, "AI vote"))
    if stats.human_votes or (people and fmt in ("arena", "oxford", "council")):
        counts.append(plural(stats.human_votes, "human vote"))
    if stats.switches or fmt == "arena":
        counts.append(plural(stats.switches, "switch") + stats.switch_deciders())
    counts += [f"{n} {label}" for n, label in fallback_counts(stats) if n]
    if stats.debate_seconds or stats.paused_seconds:  # a debate that never got going shows no 0:00
        time = f"debate time {minutes(stats.debate_seconds)}"
        if stats.paused_seconds:
            time += f" (+{minutes(stats.paused_seconds)} paused for votes)"
        counts.append(time)
    return [*counts, f"{stats.tokens.total:,} tokens{cost_suffix(stats.tokens)}"]
