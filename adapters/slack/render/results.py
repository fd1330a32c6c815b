"""A finished debate's result as Slack mrkdwn (pure): the line on the opening card, and the short
message the channel gets."""

from __future__ import annotations

from adapters.results import DebateResult, first_line
from adapters.slack.inbound.home.blocks import thread_link
from adapters.slack.render.text import escape


def result_line(decision: str | None, summary: str) -> str:
    """`\\n🏆 Verdict: … — one line of the summary` (empty when there is nothing to add)."""
    bits = []
    if decision:
        bits.append(f"🏆 *{escape(decision)}*")
    if summary.strip():
        bits.append(escape(first_line(summary)))
    return ("\n" + " — ".join(bits)) if bits else ""


def result_message(result: DebateResult, *, channel: str, thread_ts: str) -> str:
    """What the channel is told when a debate ends: result, one line of summary, a link to the thread."""
    head = f"🏁 *Debate over:* {escape(result.topic)}"
    if not result.completed:
        head += f" ({escape(result.ending)})"
    lines = [head]
    if result.decision:
        lines.append(f"🏆 {escape(result.decision)}")
    if result.summary:
        lines.append(f"_{escape(result.summary)}_")
    lines.append(f"<{thread_link(channel, thread_ts)}|The whole debate is in its thread>")
    return "\n".join(lines)
