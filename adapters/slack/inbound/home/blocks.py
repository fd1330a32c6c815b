"""The App Home tab (pure): how to use Rostra, this workspace's running and recent debates with links
to their threads, and a Start button. Also the short answer to a direct message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from adapters.slack.render.blocks import context, divider, section, sections
from adapters.slack.render.ops import Block
from adapters.slack.render.text import escape, truncate

HOME_START_ACTION = "rostra_home_start"
RECENT_SHOWN = 10
TOPIC_SHOWN = 120
STATUS_TEXT = {
    "running": "🟢 running",
    "completed": "🏁 finished",
    "stopped": "⏹️ stopped",
    "interrupted": "⏸️ interrupted",
    "failed": "⚠️ failed",
}
HOW_TO = (
    "*Rostra runs debates between AI personas, in a thread under its opening card.*\n"
    "• *Start one:* the button below, `/debate` in a channel (opens the same form),"
    " `/debate <topic>`, or `@Rostra debate <topic> format=oxford rounds=2`.\n"
    "• *From a message:* its ⋮ menu → _Debate this message_ (the message becomes the topic).\n"
    "• *Follow it:* the opening card's Status, Stop and Transcript buttons, or `@Rostra status`.\n"
    "• *Vote:* react on the vote cards in the thread; one vote each, your newest reaction still on the"
    " card counts.\n"
    "• *Documents:* choose the panel format and attach one text or Markdown file per panellist."
)
DM_ANSWER = (
    "Hi! I run debates between AI personas in channels. In a channel I'm in, type `/debate` (a form"
    " opens) or mention me: `@Rostra debate Should cities ban cars?`. Open my *Home* tab for the"
    " debates running in this workspace and a Start button; `@Rostra help` in a channel lists everything."
)


@dataclass(frozen=True)
class DebateLine:
    """One debate as the Home tab lists it."""

    topic: str
    format: str
    status: str
    channel: str
    thread_ts: str | None
    reason: str = ""


def thread_link(channel: str, ts: str) -> str:
    """A permalink to the message `ts` (Slack redirects it into the workspace)."""
    return f"https://slack.com/archives/{channel}/p{ts.replace('.', '')}"


def _line(debate: DebateLine) -> str:
    topic = truncate(escape(" ".join(debate.topic.split())), TOPIC_SHOWN)  # escaped, then cut
    if debate.thread_ts:
        topic = f"<{thread_link(debate.channel, debate.thread_ts)}|{topic}>"
    status = STATUS_TEXT.get(debate.status, escape(debate.status))
    reason = (
        f" ({truncate(escape(debate.reason), 80)})" if debate.reason and debate.status != "running" else ""
    )
    return f"• *{topic}* · {escape(debate.format)} · <#{debate.channel}> · {status}{reason}"


def home_view(running: Sequence[DebateLine], recent: Sequence[DebateLine]) -> dict[str, Any]:
    blocks: list[Block] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Rostra"}},
        section(HOW_TO),
        {
            "type": "actions",
            "block_id": "home",
            "elements": [
                {
                    "type": "button",
                    "action_id": HOME_START_ACTION,
                    "style": "primary",
                    "text": {"type": "plain_text", "text": "Start a debate"},
                    "value": "start",
                }
            ],
        },
        divider(),
        section("*Running now*"),
    ]
    if running:
        blocks.extend(sections([_line(d) for d in running]))  # whole lines: no link is cut
    else:
        blocks.append(context("No debate is running in this workspace."))
    blocks.append(section("*Recently finished*"))
    if recent:
        blocks.extend(sections([_line(d) for d in recent[:RECENT_SHOWN]]))
    else:
        blocks.append(context("None yet."))
    return {"type": "home", "callback_id": "rostra_home", "blocks": blocks}
