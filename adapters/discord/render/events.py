"""Event → what the debate thread should show (display operations). Pure: no I/O, only the little
state rendering needs (turn texts, vote cards, the opening card)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import assert_never

from adapters.ballot_card import BallotCard, CardEvent, council_ballot
from adapters.ballot_words import clicking
from adapters.chunking import split_message
from adapters.discord.render.cards import (
    clock_line,
    closing_card,
    notice_text,
    opening_card,
    switch_text,
    verdict_card,
)
from adapters.discord.render.ops import MESSAGE_LIMIT, Attachment, Card, Op, Post, React, Show
from adapters.discord.render.votecard import vote_card
from adapters.results import ending_text
from core.events import (
    Artifact,
    ClockTick,
    DebateCompleted,
    DebateStarted,
    Event,
    HumanVoteOpened,
    Notice,
    PhaseChanged,
    SpeakerSwitched,
    TurnCompleted,
    TurnDelta,
    TurnStarted,
    Verdict,
    VoteCast,
    VoteWithdrawn,
    VotingClosed,
    VotingStarted,
)
from core.models import PersonaRef, VoteOption
from core.words import document_of, quote_mark

CURSOR = " ▌"
OPENING = "opening"
CLOSING = "closing"


def turn_slot(turn_id: str) -> str:
    return f"turn:{turn_id}"


def vote_slot(vote_id: str) -> str:
    return f"vote:{vote_id}"


@dataclass
class _Turn:
    speaker: PersonaRef
    heading: str
    text: str = ""


def turn_posts(speaker: PersonaRef, heading: str, text: str, *, cursor: bool = False) -> tuple[Post, ...]:
    """A turn as one or more messages in the persona's name: a small heading, then the text."""
    body = f"-# {heading}\n{text}" if heading else text
    chunks = split_message(body, MESSAGE_LIMIT - len(CURSOR)) or [f"-# {heading}"]
    if cursor:
        chunks[-1] += CURSOR
    return tuple(Post(content=chunk, persona=speaker) for chunk in chunks)


def _final_text(event: TurnCompleted, document: str | None = None) -> str:
    text = f"*{event.text}*" if event.fallback else event.text
    extra: list[str] = []
    if event.interrupted:
        extra.append("-# (interrupted)")
    for quote in event.quotes:
        extra.append(f"> “{quote.text}” {quote_mark(quote.verified, document)}")
    if event.sources:
        extra.append("Sources:")
        extra += [f"- [{s.title}](<{s.url}>)" for s in event.sources]
    return "\n".join([text, *extra]) if extra else text


class DiscordView:
    """Turns each event into display operations, in order."""

    def __init__(self, *, streaming: bool, buttons: bool = False) -> None:
        self.streaming = streaming
        self.buttons = buttons  # people vote with buttons (adapters/discord/ballots/buttons.py)
        self._started: DebateStarted | None = None
        self._turns: dict[str, _Turn] = {}
        self._shown: set[str] = set()
        self._ballots: dict[str, BallotCard] = {}
        self._last_moderator_text = ""

    def mark_shown(self, slots: Iterable[str]) -> None:
        """Slots already in the thread (a debate resumed after a restart): a turn that starts over
        replaces what its message shows."""
        self._shown.update(slots)

    def render(self, event: Event) -> list[Op]:
        ops = self._render(event)
        self._shown.update(op.slot for op in ops if isinstance(op, Show))
        return ops

    def _render(self, event: Event) -> list[Op]:
        match event:
            case DebateStarted():
                self._started = event
                return [self._opening()]
            case PhaseChanged():
                return []
            case TurnStarted():
                return self._turn_started(event)
            case TurnDelta():
                turn = self._turns.get(event.turn_id)
                if not self.streaming or turn is None:
                    return []
                turn.text += event.text
                posts = turn_posts(turn.speaker, turn.heading, turn.text, cursor=True)
                return [Show(turn_slot(event.turn_id), posts, live=True)]
            case TurnCompleted():
                turn = self._turns.pop(event.turn_id, None)
                heading = turn.heading if turn is not None else f"Round {event.round}"
                if event.role == "moderator":
                    self._last_moderator_text = event.text
                posts = turn_posts(
                    event.speaker, heading, _final_text(event, self._document_of(event.speaker))
                )
                return [Show(turn_slot(event.turn_id), posts)]
            case VotingStarted():
                ballot = self._ballots[event.vote_id] = BallotCard(event)
                return [self._card(ballot)]
            case HumanVoteOpened():
                # the ballot's seeds go on only when people may vote, and only for what they may
                # choose: no bot reactions on a card nobody can vote on, none counted as votes.
                # The countdown first, then the seeds: the window's clock starts once both show.
                opened = self._ballot_update(event)
                if opened:
                    opened.extend(self._seeds(event.vote_id, event.options))
                return opened
            case VoteCast() | VoteWithdrawn():  # people's votes are live edits, AI votes are not
                return self._ballot_update(event, live=isinstance(event, VoteWithdrawn) or event.voter.human)
            case VotingClosed():
                return self._ballot_update(event)
            case SpeakerSwitched():
                return [Show(f"switch:{event.seq}", (Post(content=switch_text(event)),))]
            case ClockTick():
                status = clock_line(event.elapsed, event.remaining, event.paused)
                return [self._opening(status, live=True)] if self._started is not None else []
            case Verdict():
                return [Show(f"verdict:{event.seq}", (Post(cards=(self._verdict(event),)),))]
            case Notice():
                return [Show(f"notice:{event.seq}", (Post(content=notice_text(event)),))]
            case Artifact():
                post = Post(content=f"📎 {event.name}", attachment=Attachment(event.name, event.content))
                return [Show(f"artifact:{event.seq}", (post,))]
            case DebateCompleted():
                return self._completed(event)
            case _:
                assert_never(event)

    # --- pieces ------------------------------------------------------------------------------

    @property
    def format(self) -> str:
        return self._started.format if self._started is not None else ""

    def _document_of(self, speaker: PersonaRef) -> str | None:
        """The panel's document a panellist answers from (its quotes are checked against it)."""
        return document_of(self._started.settings, speaker.id) if self._started is not None else None

    def _verdict(self, event: Verdict) -> Card:
        """A council's decision carries its tally and abstentions (from its ballot); others as they are."""
        ballot = council_ballot(self.format, self._ballots.values(), event)
        if ballot is None:
            return verdict_card(event)
        tally = ballot.tally_text(event.tally, list(event.tally)) if event.tally else ""
        return verdict_card(event, tally=tally, abstained=ballot.abstained())

    def _opening(self, status: str = "", *, live: bool = False) -> Show:
        assert self._started is not None
        card = opening_card(self._started, status=status)
        card = clicking_card(card) if self.buttons else card
        return Show(OPENING, (Post(cards=(card,)),), live=live)

    def _turn_started(self, event: TurnStarted) -> list[Op]:
        self._turns[event.turn_id] = _Turn(event.speaker, event.heading)
        slot = turn_slot(event.turn_id)
        if event.attempt > 1 and slot in self._shown:
            posts = turn_posts(event.speaker, event.heading, "↻ *starting over…*", cursor=self.streaming)
            return [Show(slot, posts)]
        return []

    def _card(self, view: BallotCard, *, live: bool = False) -> Show:
        card = vote_card(view, buttons=self.buttons)
        return Show(vote_slot(view.started.vote_id), (Post(cards=(card,)),), live=live)

    def _ballot_update(self, event: CardEvent, *, live: bool = False) -> list[Op]:
        view = self._ballots.get(event.vote_id)
        if view is None:
            return []
        view.see(event)
        return [self._card(view, live=live)]

    def started_vote(self, vote_id: str) -> VotingStarted | None:
        view = self._ballots.get(vote_id)
        return view.started if view is not None else None

    def open_ballot(self, window: HumanVoteOpened) -> list[Op]:
        """The card of an open window as it stands, with its ballot's seeds (to show it again when
        it did not get through)."""
        view = self._ballots.get(window.vote_id)
        if view is None:
            return []
        return [self._card(view), *self._seeds(window.vote_id, window.options)]

    def _seeds(self, vote_id: str, options: Sequence[VoteOption]) -> list[Op]:
        """The bot's own reactions that make a card a ballot (none with button ballots)."""
        emojis = tuple(o.emoji for o in options if o.emoji)
        return [React(vote_slot(vote_id), emojis)] if emojis and not self.buttons else []

    def _completed(self, event: DebateCompleted) -> list[Op]:
        summary = event.summary.strip()
        extra = summary if summary and summary != self._last_moderator_text.strip() else None
        card = closing_card(event, self._started, summary=extra)
        ops: list[Op] = [Show(CLOSING, (Post(cards=(card,)),))]
        if self._started is not None:
            ops.append(self._opening(f"Ended: {ending_text(event)}"))
        return ops


def clicking_card(card: Card) -> Card:
    """The card's voting instructions for button ballots (adapters/ballot_words.py)."""
    fields = tuple(replace(f, value=clicking(f.value)) for f in card.fields)
    return replace(card, description=clicking(card.description), fields=fields)
