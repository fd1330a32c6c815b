"""Transcripts from the event log: Markdown for people, JSON Lines for machines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

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
    dump_event,
)
from core.models import Statistics, fallback_counts
from core.ports import DebateRecord
from core.words import document_of, quote_mark


def minutes(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 60}:{s % 60:02d}"


def stats_table(stats: Statistics) -> list[str]:
    judged = any(p.judged for p in stats.per_persona)
    header = "| Persona | Turns | Words |" + (" Judged | Keep | Replace |" if judged else "")
    rule = "| --- | ---: | ---: |" + (" ---: | ---: | ---: |" if judged else "")
    lines = [header, rule]
    for p in stats.per_persona:
        row = f"| {p.persona.emoji} {p.persona.name} | {p.turns} | {p.words} |"
        if judged:
            row += f" {p.judged} | {p.votes_keep} | {p.votes_replace} |"
        lines.append(row)
    counts = [f"rounds {stats.rounds}", f"turns {stats.turns}", f"words {stats.words}"]
    counts += [
        f"{label} {n}"
        for n, label in (
            (stats.votes, "AI votes"),
            (stats.human_votes, "human votes"),
            (stats.switches, "switches"),
        )
        if n
    ]
    if stats.switches:
        counts[-1] += stats.switch_deciders()
    counts += [f"{label} {n}" for n, label in fallback_counts(stats) if n]
    time = f"Debate time {minutes(stats.debate_seconds)}"
    if stats.paused_seconds:
        time += f" (+{minutes(stats.paused_seconds)} paused for votes)"
    lines += [
        "",
        " · ".join(counts),
        f"{time} · tokens {stats.tokens.total:,} (in {stats.tokens.input_tokens:,},"
        f" out {stats.tokens.output_tokens:,})",
    ]
    return lines


def to_markdown(record: DebateRecord | None, events: Sequence[Event]) -> str:
    out: list[str] = []
    headings: dict[str, str] = {}
    settings: dict[str, object] = {}  # the debate's (a panellist's quotes name its document)
    for event in events:
        match event:
            case DebateStarted():
                settings = event.settings
                out.append(f"# {event.topic}")
                meta = f"Debate `{event.debate_id}` · format {event.format}"
                if record is not None:
                    meta += f" · started {record.created_at:%Y-%m-%d %H:%M} UTC · {record.status}"
                out += [meta, "", "## Cast", ""]
                out += [f"- {m.persona.emoji} {m.persona.name}: {m.role}" for m in event.cast]
                out.append("")
            case TurnStarted():
                headings[event.turn_id] = event.heading
            case TurnCompleted():
                heading = headings.get(event.turn_id, f"Round {event.round}")
                marks = " (fallback)" if event.fallback else " (interrupted)" if event.interrupted else ""
                out += [f"## {heading}: {event.speaker.emoji} {event.speaker.name}{marks}", "", event.text]
                if event.quotes:
                    out += [""] + [
                        f"> “{q.text}” {quote_mark(q.verified, document_of(settings, event.speaker.id))}"
                        for q in event.quotes
                    ]
                if event.sources:
                    out += ["", "Sources:"] + [f"- [{s.title}]({s.url})" for s in event.sources]
                out.append("")
            case VotingStarted():
                out += [f"### Vote {event.vote_id}: {event.title}", ""]
            case VoteCast():
                who = f"{event.voter.emoji} {event.voter.name}".strip()
                kind = "person" if event.voter.human else "AI"
                reason = f": {event.reason}" if event.reason else ""
                out.append(f"- {who} ({kind}) → {event.choice}{reason}")
            case VoteWithdrawn():
                out.append(f"- {event.voter.name} withdrew their vote")
            case HumanVoteOpened():
                why = "to break a tie" if event.reason == "tie" else "alongside the observers"
                out.append(f"- People may vote {why} for {int(event.window)} s")
            case VotingClosed():
                tally = ", ".join(f"{k} {v:g}" for k, v in event.tally.items())
                people = ", ".join(f"{k} {v}" for k, v in event.human_tally.items() if v)
                line = f"**Result:** {event.decision_label} (AI: {tally}"
                line += f"; people: {people})" if people else ")"
                out += ["", line]
                if event.note:
                    out.append(f"_{event.note}_")
                out.append("")
            case SpeakerSwitched():
                out += [
                    f"**Switch:** {event.old.emoji} {event.old.name} → {event.new.emoji} {event.new.name}"
                    f" ({event.reason})",
                    "",
                ]
            case Verdict():
                by = f" ({event.by.name})" if event.by else ""
                out += [f"### {event.title}{by}: {event.winner_label}", "", event.reasoning, ""]
            case Notice():
                out += [f"> {event.level}: {event.message}", ""]
            case Artifact():
                out += [f"Attached file: `{event.name}`", ""]
            case DebateCompleted():
                out += ["## Statistics", "", *stats_table(event.stats)]
                ending = f"{event.reason}" + (f": {event.detail}" if event.detail else "")
                out += ["", f"Ended: {ending}", ""]
            case PhaseChanged() | ClockTick() | TurnDelta():
                pass
            case _:
                assert_never(event)
    return "\n".join(out).rstrip() + "\n"


def to_json_lines(events: Sequence[Event]) -> str:
    return "".join(dump_event(e) + "\n" for e in events)
