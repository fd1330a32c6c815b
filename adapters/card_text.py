"""What the cards say, written once for every front end (pure): counts and lists, what each member
of the cast does, and how people take part in a debate of each format.

The words are the same in Discord, Slack and the terminal; each front end only writes them its own
way (`Markup`: its emphasis, its escaping, how it names a ballot's choices).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.formats.arena import OPTIONS as ARENA_OPTIONS
from core.formats.council import EMOJIS as COUNCIL_EMOJIS
from core.formats.oxford import AUDIENCE_OPTIONS
from core.models import CastMember, VoteOption
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
