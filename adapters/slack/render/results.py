"""A finished debate's result as Slack mrkdwn (pure): the line on the opening card, and the short
message the channel gets."""

from __future__ import annotations

from adapters.results import DebateResult, first_line
from adapters.results import result_message as _result_message
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
    return _result_message(
        result,
        head=f"🏁 *Debate over:* {escape(result.topic)}",
        italic=lambda text: f"_{text}_",
        escape=escape,
        link=f"<{thread_link(channel, thread_ts)}|The whole debate is in its thread>",
    )
