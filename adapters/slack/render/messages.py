"""What Rostra says to a person in Slack (ephemeral replies): help, refusals, status, the cast.

Anything that came from a person or a model is escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping

from adapters.slack.render.text import escape, truncate
from core.formats import DebateFormat
from core.models import Persona
from core.session import DebateStatusView
from core.transcript import minutes

NOT_PERMITTED = (
    "Only the people set in Rostra's `slack.starter_users` or `slack.starter_groups` may start debates."
)
STOP_NOT_PERMITTED = (
    "Only the person who started this debate, the channel's creator or a Rostra admin"
    " (`slack.admin_users`, `slack.admin_groups`) may stop it."
)
NOTHING_RUNNING = "No debate is running in this channel. Start one with `/debate <topic>`."
BUSY = "Another debate is being set up in this channel right now; try again in a moment."
CHECK_TIMED_OUT = "I couldn't check whether you may start debates in time; please try again."
SLASH_CARRIES_NO_FILES = (
    "\n/debate can't carry files: mention me instead, with the files attached to the same message"
    " (`@Rostra debate <question> format=panel`)."
)
VOTE_HINT = (
    "Vote by reacting on the vote cards in the debate's thread: one vote each, your newest reaction"
    " still on the card counts, and removing your last one withdraws your vote."
)


def help_text(
    formats: Mapping[str, type[DebateFormat]], unknown: str | None = None, *, document_chars: int
) -> str:
    limit_text = f"up to {document_chars:,} characters each"
    lines: list[str] = []
    if unknown:
        lines += [f"I didn't understand “{escape(truncate(unknown, 80))}”. Here is what I can do:", ""]
    lines += [
        "*Rostra runs debates between AI personas, in a thread.*",
        "• `@Rostra debate <topic> [format=…] [rounds=…] [duration=…] [humans=off|tiebreak|vote]`"
        " starts one; `/debate <topic> …` does the same",
        "• `stop` ends the debate running in this channel",
        "• `status` shows how it is going",
        "• `transcript [id]` attaches the transcript of this channel's debate as a Markdown file",
        "• `personas` lists the cast",
        "• `help` shows this",
        "",
        "*Formats:* "
        + "; ".join(f"`{escape(name)}`: {escape(cls.description)}" for name, cls in formats.items()),
        "*Options:* `rounds=` rounds before the closing summary · `duration=` debate time (`300`, `5m`,"
        " `1m30s`) · `humans=` `off`, `tiebreak` (people break ties) or `vote` (people vote too)"
        " · quote a topic that contains `=`",
        "*Example:* `/debate Should cities ban cars? rounds=2 duration=5m humans=vote`",
        "*Documents (panel):* mention me with `debate <question> format=panel` and attach one text or"
        f" Markdown file per panellist (`.txt`, `.md`) to the same message, {limit_text}; a file named"
        " `questions.md` (or the one named with `question_file=<file name>`) holds the questions to"
        " draw. `/debate` can't carry files.",
        VOTE_HINT,
    ]
    return "\n".join(lines)


def refusal(message: str) -> str:
    return f"🚫 {escape(message)}"


def starting(topic: str) -> str:
    return f"Starting a debate on *{escape(topic)}*: follow it in the thread under my opening card."


def no_answer(error: str) -> str:
    """Slack did not answer the opening card's post and the card was not found posted: no debate
    started (a card that landed where the channel could not be read back stays, still pending)."""
    return (
        f"🚫 Slack didn't answer when I posted the opening card ({escape(error)}); nothing started."
        " Try again in a moment."
    )


def cannot_post(error: str) -> str:
    return (
        f"🚫 I can't post in this channel ({escape(error)}). Invite me with `/invite @Rostra` and try again."
    )


def could_not_start(message: str) -> str:
    return f"🚫 The debate could not start: {escape(message)}"


def stopping(topic: str) -> str:
    return f"Stopping the debate on *{escape(topic)}*; the closing card follows in its thread."


def stop_requested(topic: str) -> str:
    return (
        f"Asked the debate on *{escape(topic)}* to stop; it ends within moments, "
        "and its closing card follows in its thread."
    )


def status_text(view: DebateStatusView) -> str:
    bits = [f"phase *{escape(view.phase)}*"]
    if view.round:
        bits.append(f"round {view.round}")
    if view.speaker:
        bits.append(f"{escape(view.speaker)} has the floor")
    bits.append(f"{view.turns} turns")
    clock = f"{minutes(view.elapsed)} elapsed"
    if view.remaining is not None:
        clock += f", {minutes(view.remaining)} left"
    bits.append(clock)
    return (
        f"*{escape(view.topic)}* ({escape(view.format)}, debate `{view.debate_id}`)\n"
        + " · ".join(bits)
        + f"\n{VOTE_HINT}"
    )


def personas_text(personas: Mapping[str, Persona]) -> str:
    lines = ["*The cast* (each format seats them in its own roles)"]
    for pid, p in personas.items():
        voice = f": {escape(truncate(p.voice, 160))}" if p.voice else ""
        lines.append(f"{p.emoji} *{escape(p.name)}* (`{escape(pid)}`){voice}")
    return "\n".join(lines)


def transcript_attached(debate_id: str, topic: str) -> str:
    return f"The transcript of *{escape(topic)}* (debate `{debate_id}`) is attached in the debate's thread."


def transcript_recent(debate_id: str, topic: str, link: str | None, minutes: int) -> str:
    where = f"<{link}|the debate's thread>" if link else "the debate's thread"
    return (
        f"The transcript of *{escape(topic)}* (debate `{debate_id}`) was attached in {where} a few"
        f" minutes ago; it is attached again at most every {minutes} minutes."
    )


def preparing_transcript(debate_id: str) -> str:
    return f"Attaching the transcript of debate `{debate_id}`…"


def no_transcript(debate_id: str | None) -> str:
    if debate_id:
        return f"🚫 There is no debate `{escape(debate_id)}` in this channel: ask for it where it was held."
    return "🚫 There has been no debate in this channel yet."


def transcript_failed(error: str) -> str:
    return f"🚫 I couldn't attach the transcript ({escape(error)})."
