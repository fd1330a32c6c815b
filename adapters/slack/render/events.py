"""Event → what the debate's Slack thread shows, as ops for the sender. Pure: no I/O.

The view keeps only the little state rendering needs: the text of each turn so far (streaming),
the ballots (to redraw a vote card), the status of the opening card. Every model text and every
topic is escaped, so nothing in them becomes a mention or a link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import assert_never

from adapters.ballot_card import CardEvent, council_ballot
from adapters.card_text import plural
from adapters.chunking import split_message
from adapters.results import ResultTracker, ending_text
from adapters.slack.render.blocks import context, section
from adapters.slack.render.cards import closing_card, opening_card
from adapters.slack.render.emoji import option_reactions
from adapters.slack.render.ops import OPENING, Delete, Op, Post, Update, Upload, event_key, turn_key, vote_key
from adapters.slack.render.results import result_line
from adapters.slack.render.text import escape, model_text
from adapters.slack.render.votecard import BallotView, vote_card
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
from core.models import PersonaRef, QuoteCheck, Source
from core.transcript import minutes
from core.words import document_of, quote_mark

# Room kept in persona messages for the bold name prefix used when Slack refuses custom names.
PERSONA_PREFIX_ROOM = 120
NOTICE_MARK = {"info": "ℹ️", "warning": "⚠️", "error": "❗"}
STOP_HINT = "Stop it with `/debate stop` or by mentioning me with `stop`."
RESUMED_NOTE = "🔄 picked up again after a restart"


# --- turns ---------------------------------------------------------------------------------------


def _quote_lines(quotes: tuple[QuoteCheck, ...], document: str | None) -> list[str]:
    return [f"> “{escape(q.text)}” {escape(quote_mark(q.verified, document))}" for q in quotes]


def _source_line(source: Source) -> str:
    url = source.url.strip()
    title = escape(source.title.replace("|", "/")) or escape(url)
    if url.startswith(("https://", "http://")) and not any(c in url for c in "<>| \n"):
        return f"• <{url}|{title}>"
    return f"• {title} ({escape(url)})"


def turn_body(
    heading: str,
    text: str,
    *,
    interim: bool = False,
    fallback: bool = False,
    interrupted: bool = False,
    quotes: tuple[QuoteCheck, ...] = (),
    document: str | None = None,
    sources: tuple[Source, ...] = (),
) -> str:
    body = model_text(text).strip()
    if fallback and body:
        body = f"_{body}_"
    if interim:
        body = f"{body} …" if body else "_…_"
    if interrupted:
        body = f"{body} _(interrupted)_".strip()
    lines = [f"_{escape(heading)}_", body] if heading else [body]
    if quotes:
        lines += ["", *_quote_lines(quotes, document)]
    if sources:
        lines += ["", "*Sources*", *(_source_line(s) for s in sources)]
    return "\n".join(lines)


@dataclass
class _Turn:
    turn_id: str
    speaker: PersonaRef
    heading: str
    text: str = ""
    sent: list[str] = field(default_factory=list)  # what each posted part was last asked to show


# --- the view ------------------------------------------------------------------------------------


class SlackView:
    """Turns each event into ops for the thread, in order."""

    def __init__(self, *, streaming: bool, limit: int, buttons: bool = False) -> None:
        self.streaming = streaming
        self.limit = limit
        self.buttons = buttons  # people vote with buttons on the vote cards, not reactions
        self._turns: dict[str, _Turn] = {}
        self._ballots: dict[str, BallotView] = {}
        self._started: DebateStarted | None = None
        self._phase = "starting"
        self._phase_detail = ""
        self._resumed = False
        self._round = 0
        self._clock: ClockTick | None = None
        self._last_moderator_text = ""
        self._result = ResultTracker()  # the result line on the finished opening card

    @property
    def persona_limit(self) -> int:
        return max(200, self.limit - PERSONA_PREFIX_ROOM)

    def render(self, event: Event) -> list[Op]:
        self._result.see(event)
        match event:
            case DebateStarted():
                self._started = event
                return [self._opening_update(interim=False)]
            case PhaseChanged():
                self._phase, self._phase_detail = event.phase, event.detail
                self._resumed = False
                ops: list[Op] = [self._opening_update(interim=True)]
                if event.phase == "concluding":
                    detail = f": {escape(event.detail)}" if event.detail else ""
                    text = f"🏁 *Closing*{detail}"
                    ops.append(Post(event_key(event.seq), text, (context(text),)))
                return ops
            case TurnStarted():
                self._round = max(self._round, event.round)
                return self._turn_started(event)
            case TurnDelta():
                turn = self._turns.get(event.turn_id)
                if turn is None:
                    return []
                turn.text += event.text
                if not self.streaming:
                    return []
                return self._sync(turn, turn_body(turn.heading, turn.text, interim=True), interim=True)
            case TurnCompleted():
                return self._turn_completed(event)
            case VotingStarted():
                started = BallotView(event, reactions=option_reactions(event.options))
                self._ballots[event.vote_id] = started
                text, blocks = vote_card(started, buttons=self.buttons)
                seeded = event.humans != "off" and not self.buttons
                reactions = tuple(started.reactions.values()) if seeded else ()
                return [Post(vote_key(event.vote_id), text, blocks, reactions=reactions)]
            case HumanVoteOpened() | VoteCast() | VoteWithdrawn() | VotingClosed():
                return self._ballot_changed(event)
            case SpeakerSwitched():
                text = (
                    f"🔁 {event.old.emoji} *{escape(event.old.name)}* steps down;"
                    f" {event.new.emoji} *{escape(event.new.name)}* takes the floor ({escape(event.reason)})"
                )
                return [Post(event_key(event.seq), text, (section(text),))]
            case ClockTick():
                self._clock = event
                return [self._opening_update(interim=True)]
            case Verdict():
                return [self._verdict(event)]
            case Notice():
                text = f"{NOTICE_MARK[event.level]} {escape(event.message)}"
                return [Post(event_key(event.seq), text, (context(text),))]
            case Artifact():
                return [Upload(filename=event.name, content=event.content, title=event.name)]
            case DebateCompleted():
                self._phase = "completed"
                return self._closing(event)
            case _:
                assert_never(event)

    # --- opening card ---------------------------------------------------------------------------

    def _status(self, completed: DebateCompleted | None = None) -> str:
        if completed is not None:
            s = completed.stats
            return (
                f"🏁 Finished: {escape(ending_text(completed))} · {plural(s.turns, 'turn')}"
                + (f" · {plural(s.switches, 'speaker switch')}" if s.switches else "")
                + " · the full story is in the thread"
                + result_line(self._result.decision, completed.summary)
            )
        round_text = f" · round {self._round}" if self._round else ""
        clock = ""
        if self._clock is not None:
            clock = f" · {minutes(self._clock.elapsed)} elapsed"
            if self._clock.remaining is not None:
                clock += f" · {minutes(self._clock.remaining)} left"
        label = {
            "starting": "⏳ Starting",
            "debating": "🟢 Debating",
            "voting": "🗳️ Voting",
            "concluding": "🏁 Closing",
        }.get(self._phase, f"🟢 {escape(self._phase.capitalize())}")
        detail = f": {escape(self._phase_detail)}" if self._phase_detail else ""
        resumed = f" · {RESUMED_NOTE}" if self._resumed else ""
        return f"{label}{detail}{round_text}{clock}{resumed} · {STOP_HINT}"

    def resumed(self) -> Update:
        """The opening card once a restarted bot has picked the debate up again."""
        self._resumed = True
        return self._opening_update(interim=False)

    def _opening_update(self, *, interim: bool, completed: DebateCompleted | None = None) -> Update:
        started = self._started
        status = self._status(completed)
        if started is None:
            text, blocks = opening_card(topic="", fmt="", status=status, live=completed is None)
        else:
            text, blocks = opening_card(
                topic=started.topic,
                fmt=started.format,
                cast=started.cast,
                settings=dict(started.settings),
                status=status,
                live=completed is None,
                buttons=self.buttons,
            )
        return Update(OPENING, text, blocks, interim=interim)

    # --- turns ----------------------------------------------------------------------------------

    def _turn_started(self, event: TurnStarted) -> list[Op]:
        turn = self._turns.get(event.turn_id)
        if turn is None:
            turn = _Turn(event.turn_id, event.speaker, event.heading)
            self._turns[event.turn_id] = turn
            if not self.streaming:
                return []
            return self._sync(turn, turn_body(turn.heading, "", interim=True), interim=False)
        # A retry: the earlier partial text is void.
        turn.text = ""
        turn.heading = event.heading
        if not self.streaming or not turn.sent:
            return []
        retry = turn_body(turn.heading, f"↻ {turn.speaker.name} tries again…", interim=False)
        return self._sync(turn, f"{retry}\n_…_", interim=False)

    def _turn_completed(self, event: TurnCompleted) -> list[Op]:
        turn = self._turns.pop(event.turn_id, None) or _Turn(
            event.turn_id, event.speaker, f"Round {event.round}"
        )
        if event.role == "moderator":
            self._last_moderator_text = event.text
        body = turn_body(
            turn.heading,
            event.text,
            fallback=event.fallback,
            interrupted=event.interrupted,
            quotes=event.quotes,
            document=document_of(self._started.settings, event.speaker.id) if self._started else None,
            sources=event.sources,
        )
        return self._sync(turn, body, interim=False)

    def _sync(self, turn: _Turn, body: str, *, interim: bool) -> list[Op]:
        """Ops that make the turn's messages show `body` (posting parts as the text grows)."""
        parts = split_message(body, self.persona_limit)
        ops: list[Op] = []
        for index, part in enumerate(parts):
            key = turn_key(turn.turn_id, index)
            if index < len(turn.sent):
                if turn.sent[index] != part:
                    last = index == len(parts) - 1
                    ops.append(Update(key, part, interim=interim and last, persona=turn.speaker))
                    turn.sent[index] = part
            else:
                ops.append(Post(key, part, persona=turn.speaker))
                turn.sent.append(part)
        if not interim:
            for index in range(len(parts), len(turn.sent)):
                ops.append(Delete(turn_key(turn.turn_id, index)))
            del turn.sent[len(parts) :]
        return ops

    # --- votes ----------------------------------------------------------------------------------

    def _ballot_changed(self, event: CardEvent) -> list[Op]:
        ballot = self._ballots.get(event.vote_id)
        if ballot is None:
            return []
        ballot.see(event)
        interim = not isinstance(event, HumanVoteOpened | VotingClosed)  # an opening or a result must show
        return [self._card(ballot, interim=interim, now=event.at)]

    def countdown(self, vote_id: str, now: datetime) -> Update | None:
        """The vote card redrawn for `now` (how long is left), while its people's window is open;
        an interim edit, which the rate window may coalesce or skip."""
        ballot = self._ballots.get(vote_id)
        if ballot is None or ballot.window is None or ballot.closed is not None:
            return None
        return self._card(ballot, interim=True, now=now)

    def _card(self, ballot: BallotView, *, interim: bool, now: datetime | None = None) -> Update:
        text, blocks = vote_card(ballot, buttons=self.buttons, now=now)
        return Update(vote_key(ballot.started.vote_id), text, blocks, interim=interim)

    def _verdict(self, event: Verdict) -> Post:
        by = f" ({event.by.emoji} {escape(event.by.name)})" if event.by else ""
        lines = [f"*⚖️ {escape(event.title)}*{by}: *{escape(event.winner_label)}*"]
        fmt = self._started.format if self._started is not None else ""
        ballot = council_ballot(fmt, self._ballots.values(), event)
        if ballot is not None and event.tally:
            lines.append(f"Votes: {ballot.tally_text(event.tally, list(event.tally))}")
        abstained = ballot.abstained() if ballot is not None else []
        if abstained:
            lines.append(f"Abstained: {escape(', '.join(abstained))}")
        if event.reasoning:
            lines.append(model_text(event.reasoning))
        text = "\n".join(lines)
        return Post(
            event_key(event.seq), f"{escape(event.title)}: {escape(event.winner_label)}", (section(text),)
        )

    # --- the end --------------------------------------------------------------------------------

    def _closing(self, event: DebateCompleted) -> list[Op]:
        text, blocks = closing_card(event, self._started, last_moderator_text=self._last_moderator_text)
        return [
            Post(event_key(event.seq), text, blocks),
            self._opening_update(interim=False, completed=event),
        ]
