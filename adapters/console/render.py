"""Event → what the terminal shows (Rich renderables). Pure: no I/O, only the little state rendering needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from rich.console import RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from adapters.card_text import figures, role_text, settings_text
from adapters.console.chart import terminal_chart
from adapters.pictures.data import picture_of
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
from core.models import PersonaRef, Statistics, VoteOption
from core.transcript import minutes
from core.words import document_of, quote_mark

_CHOICE_STYLE = {"keep": "green", "replace": "red", "for": "green", "against": "red"}
_NOTICE_STYLE = {"info": "dim", "warning": "yellow", "error": "bold red"}


@dataclass(frozen=True)
class Piece:
    """One thing to print; `inline` pieces continue the current line (streamed text)."""

    renderable: RenderableType
    inline: bool = False


def _persona(ref: PersonaRef, style: str = "bold") -> Text:
    return Text(f"{ref.emoji} {ref.name}", style=f"{style} {ref.color}")


def stats_table(stats: Statistics) -> Table:
    judged = any(p.judged for p in stats.per_persona)
    columns = ["Persona", "Turns", "Words"] + (["Judged", "Keep", "Replace"] if judged else [])
    table = Table(title="Statistics", title_style="bold", show_edge=False, pad_edge=False)
    for column in columns:
        table.add_column(column, justify="left" if column == "Persona" else "right")
    for p in stats.per_persona:
        cells = [str(p.turns), str(p.words)]
        if judged:
            cells += [str(p.judged), str(p.votes_keep), str(p.votes_replace)]
        table.add_row(_persona(p.persona, style=""), *cells)
    return table


def stats_line(stats: Statistics, started: DebateStarted | None) -> Text:
    return Text(" · ".join(figures(stats, started)), style="dim")


class ConsoleView:
    """Turns each event into pieces to print, in order."""

    def __init__(self, *, chart: bool = True) -> None:
        self._chart = chart
        self._log: list[Event] = []  # what the closing chart is drawn from (no streamed text)
        self._speakers: dict[str, PersonaRef] = {}
        self._started: DebateStarted | None = None  # the closing figures depend on its settings
        self._streamed: dict[str, str] = {}
        self._options: dict[str, tuple[VoteOption, ...]] = {}
        self._mid_line = False
        self._last_moderator_text = ""
        self._last_tick: int | None = None

    def render(self, event: Event) -> list[Piece]:
        if self._chart and not isinstance(event, TurnDelta | ClockTick):
            self._log.append(event)
        pieces = self._render(event)
        out: list[Piece] = []
        for piece in pieces:
            if not piece.inline and self._mid_line:
                out.append(Piece(Text("")))
                self._mid_line = False
            out.append(piece)
            if piece.inline:
                self._mid_line = True
        return out

    def _render(self, event: Event) -> list[Piece]:
        match event:
            case DebateStarted():
                self._started = event
                return [Piece(self._opening(event))]
            case PhaseChanged():
                if event.phase == "concluding":
                    return [Piece(Rule(Text(f"Closing: {event.detail}", style="bold")))]
                return []
            case TurnStarted():
                self._speakers[event.turn_id] = event.speaker
                self._streamed[event.turn_id] = ""
                header = _persona(event.speaker)
                header.append(f"  {event.heading}", style="dim")
                if event.attempt > 1:
                    return [
                        Piece(Text(f"↻ {event.speaker.name} tries again", style="dim italic")),
                        Piece(header),
                    ]
                return [Piece(Text("")), Piece(header)]
            case TurnDelta():
                speaker = self._speakers.get(event.turn_id)
                self._streamed[event.turn_id] = self._streamed.get(event.turn_id, "") + event.text
                return [Piece(Text(event.text, style=speaker.color if speaker else ""), inline=True)]
            case TurnCompleted():
                return self._turn_completed(event)
            case VotingStarted():
                self._options[event.vote_id] = event.options
                title = Text(f"🗳  {event.title}", style="bold")
                voters = ", ".join(f"{v.emoji} {v.name}" for v in event.voters)
                pieces = [Piece(Text("")), Piece(title)]
                if voters:
                    pieces.append(Piece(Text(f"   voting: {voters}", style="dim")))
                return pieces
            case HumanVoteOpened():
                choices = " / ".join(f"{o.emoji} {o.label}" for o in event.options)
                lead = "It's a tie: people" if event.reason == "tie" else "People"
                return [
                    Piece(
                        Text(f"   {lead} have {int(event.window)} s to vote ({choices}).", style="bold cyan")
                    )
                ]
            case VoteCast():
                who = Text(f"   {event.voter.emoji or '👤'} {event.voter.name}", style="bold")
                who.append(" → ")
                who.append(self._choice_text(event.vote_id, event.choice))
                if event.reason:
                    who.append(f"  {event.reason}", style="italic dim" if event.defaulted else "")
                return [Piece(who)]
            case VoteWithdrawn():
                return [Piece(Text(f"   👤 {event.voter.name} withdrew their vote", style="dim"))]
            case VotingClosed():
                return [Piece(self._vote_result(event))]
            case SpeakerSwitched():
                line = Text("🔁 ", style="bold yellow")
                line.append_text(_persona(event.old))
                line.append(" steps down; ", style="bold yellow")
                line.append_text(_persona(event.new))
                line.append(f" takes the floor ({event.reason})", style="bold yellow")
                return [Piece(line)]
            case ClockTick():
                shown = round(event.elapsed)
                if event.paused or shown == self._last_tick:
                    return []
                self._last_tick = shown
                left = f" · {minutes(event.remaining)} left" if event.remaining is not None else ""
                return [
                    Piece(Text(f"⏱  {minutes(event.elapsed)} elapsed{left}", style="dim", justify="right"))
                ]
            case Verdict():
                body = Text(event.winner_label, style="bold")
                if event.reasoning:
                    body.append(f"\n{event.reasoning}", style="")
                by = f" · {event.by.emoji} {event.by.name}" if event.by else ""
                return [Piece(Panel(body, title=f"{event.title}{by}", border_style="magenta"))]
            case Notice():
                mark = {"info": "ℹ", "warning": "⚠", "error": "✖"}[event.level]
                return [Piece(Text(f"{mark}  {event.message}", style=_NOTICE_STYLE[event.level]))]
            case Artifact():
                return [Piece(Text(f"📎 {event.name} ({len(event.content):,} characters)", style="cyan"))]
            case DebateCompleted():
                return self._closing(event)
            case _:
                assert_never(event)

    def _opening(self, event: DebateStarted) -> Panel:
        body = Text(event.topic, style="bold")
        body.append("\n")
        for member in event.cast:
            body.append("\n")
            body.append_text(_persona(member.persona))
            body.append(f"  {role_text(event.format, member, event.settings)}", style="dim")
        settings = settings_text(event.format, event.settings, lambda text: text)
        if settings:
            body.append("\n\n" + " · ".join(settings), style="dim")
        return Panel(body, title=f"Rostra · {event.format}", border_style="bright_blue", expand=False)

    def _choice_text(self, vote_id: str, choice: str) -> Text:
        option = next((o for o in self._options.get(vote_id, ()) if o.key == choice), None)
        label = f"{option.emoji} {option.label}" if option else choice
        return Text(label, style=f"bold {_CHOICE_STYLE.get(choice, 'cyan')}")

    def _vote_result(self, event: VotingClosed) -> Panel:
        labels = {o.key: o.label for o in self._options.get(event.vote_id, ())}
        body = Text(event.decision_label, style="bold")
        if event.tally:
            tally = " · ".join(f"{labels.get(k, k)} {v:g}" for k, v in event.tally.items())
            body.append(f"\nAI: {tally}", style="")
        if any(event.human_tally.values()):
            people = " · ".join(f"{labels.get(k, k)} {v}" for k, v in event.human_tally.items())
            body.append(f"\npeople: {people}")
        if event.note:
            body.append(f"\n{event.note}", style="italic dim")
        style = "red" if event.decision == "replace" else "green" if event.decision == "keep" else "cyan"
        return Panel(body, title=f"Vote {event.vote_id}", border_style=style, expand=False)

    def _turn_completed(self, event: TurnCompleted) -> list[Piece]:
        streamed = self._streamed.pop(event.turn_id, "")
        speaker = event.speaker
        pieces: list[Piece] = []
        if event.fallback:
            pieces.append(Piece(Text(event.text, style="italic dim")))
        elif event.interrupted:
            pieces.append(Piece(Text(" [interrupted]", style="dim"), inline=bool(streamed)))
        elif streamed.strip() != event.text.strip():
            if streamed:
                pieces.append(Piece(Text("")))
            pieces.append(Piece(Text(event.text, style=speaker.color)))
        if event.role == "moderator":
            self._last_moderator_text = event.text
        for quote in event.quotes:
            document = document_of(self._started.settings, event.speaker.id) if self._started else None
            mark, style = quote_mark(quote.verified, document), "green" if quote.verified else "red"
            pieces.append(Piece(Text(f"   “{quote.text}” {mark}", style=style)))
        for source in event.sources:
            pieces.append(Piece(Text(f"   🔗 {source.title}: {source.url}", style="blue underline")))
        return pieces

    def _closing(self, event: DebateCompleted) -> list[Piece]:
        pieces = [Piece(Rule(Text("The end", style="bold")))]
        if event.summary and event.summary.strip() != self._last_moderator_text.strip():
            pieces.append(Piece(Panel(Text(event.summary), title="Summary", expand=False)))
        pieces.append(Piece(stats_table(event.stats)))
        picture = picture_of(self._log) if self._chart else None
        if picture is not None:
            pieces += [Piece(Text("")), Piece(terminal_chart(picture)), Piece(Text(""))]
        pieces.append(Piece(stats_line(event.stats, self._started)))
        pieces.append(Piece(Text(f"Ended: {ending_text(event)}", style="bold")))
        return pieces
