"""What a vote card says, written once for Discord and Slack (pure): each AI voter's line, how people
vote and what they have voted so far while the window is open, and the result.

Each front end writes the words in its own marks (`card_text.Markup`), names the options its own way
(`BallotCard.choice_text`) and says when voting closes in its own terms: Discord a timestamp every
reader sees in their own time zone, Slack a date token with a countdown it edits as the window runs.
With button ballots the instructions say click, not react (`ballot_words.clicking`).
"""

from __future__ import annotations

from adapters.ballot_card import BallotCard
from adapters.ballot_words import clicking
from adapters.card_text import ONE_VOTE_EACH, Markup, span
from core.formats.council import ABSTAIN
from core.models import PersonaRef, Voter


def ai_lines(ballot: BallotCard, mark: Markup) -> list[str]:
    """One line per AI voter, in the ballot's order (then anyone else who voted): their choice and
    reason, or that they are still thinking (or cast no vote, once the card is closed)."""
    voters: list[PersonaRef | Voter] = list(ballot.started.voters)
    listed = {v.id for v in voters}
    voters += [cast.voter for vid, cast in ballot.ai.items() if vid not in listed]
    return [_ai_line(ballot, voter, mark) for voter in voters]


def _ai_line(ballot: BallotCard, voter: PersonaRef | Voter, mark: Markup) -> str:
    who = f"{voter.emoji} {mark.strong(mark.escape(voter.name))}".strip()
    vote = ballot.ai.get(voter.id)
    if vote is None:
        return f"{who} — {mark.em('no vote' if ballot.closed is not None else 'thinking…')}"
    if vote.choice == ABSTAIN and ballot.option(ABSTAIN) is None:
        line = f"{who} abstains"
    else:
        line = f"{who} → {ballot.choice_text(vote.choice)}"
    if vote.defaulted:  # the engine's words, not the voter's: its model failed
        return f"{line} — {mark.em(mark.escape(vote.reason or 'counted by default'))}"
    return f"{line} — {mark.model(vote.reason)}" if vote.reason else line


def people_lines(ballot: BallotCard, mark: Markup, *, closes: str = "", buttons: bool = False) -> list[str]:
    """How people take part while the card is open: before their window, what will happen; during
    it, what to do, the one-vote rule and their votes so far, then `closes` (when voting closes, in
    the front end's terms: ` · voting closes …`). Nothing once the card is closed."""
    lines = _people_lines(ballot, mark, closes)
    return [clicking(line) for line in lines] if buttons else lines


def _people_lines(ballot: BallotCard, mark: Markup, closes: str) -> list[str]:
    started, window = ballot.started, ballot.window
    if ballot.closed is not None:
        return []
    if window is None:
        voters = "observers" if started.subject is not None else "AI voters"
        if started.humans == "tiebreak" and len(started.options) > 2:
            return [f"If the {voters} tie, people decide among the tied options; this card will say which."]
        if started.humans == "tiebreak":
            return [f"If the {voters} tie, people decide: react with {ballot.marks()}."]
        if started.humans == "vote":
            who = "People vote too" if started.voters else "Vote now"
            return [f"{who}: react with {ballot.marks()} once voting opens."]
        return []
    within = f"within {span(int(window.window))}"
    if window.reason == "tie" and ballot.narrowed:
        tie = mark.strong(f"It's a tie between {ballot.marks(joiner='and')}: people decide!")
        lead = f"{tie} React with one of them {within}; the other options don't count."
    elif window.reason == "tie":
        tie = mark.strong("It's a tie: people decide!")
        lead = f"{tie} React with {ballot.marks()} {within}."
    elif started.voters:
        lead = (
            f"{mark.strong('People vote too:')} react with {ballot.marks()} {within}; the people's"
            " majority counts as one more vote."
        )
    else:
        lead = f"{mark.strong('Vote now:')} react with {ballot.marks()} {within}."
    counts = ballot.tally_text(ballot.people_tally(), ballot.open_keys)
    return [f"{lead} {ONE_VOTE_EACH}", f"People so far: {counts}{closes}"]


def result_lines(ballot: BallotCard, mark: Markup) -> list[str]:
    """The closed card's result: the decision, the AI's tally, the people's (when they had a
    window or voted) and the engine's note."""
    closed = ballot.closed
    if closed is None:
        return []
    lines = [mark.strong(f"Result: {mark.escape(closed.decision_label)}")]
    if ballot.started.voters or closed.tally:
        lines.append(f"AI: {ballot.tally_text(closed.tally)}")
    if ballot.window is not None or any(closed.human_tally.values()):
        keys = ballot.open_keys if ballot.window is not None else None
        lines.append(f"People: {ballot.tally_text(closed.human_tally, keys)}")
    if closed.note:
        lines.append(mark.em(mark.escape(closed.note)))
    return lines
