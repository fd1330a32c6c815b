"""The opening card's buttons (pure Block Kit): Stop (with Slack's confirmation dialog) and Status
while the debate runs, Transcript always. Their action ids are fixed, so clicks reach any process."""

from __future__ import annotations

from typing import Any

from adapters.slack.render.ops import Block

STOP_ACTION = "rostra_card_stop"
STATUS_ACTION = "rostra_card_status"
TRANSCRIPT_ACTION = "rostra_card_transcript"
BLOCK_ID = "rostra_card"


def _button(action_id: str, text: str, **extra: Any) -> Block:
    return {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "value": action_id.removeprefix("rostra_card_"),
        **extra,
    }


STOP_CONFIRM: Block = {
    "title": {"type": "plain_text", "text": "Stop this debate?"},
    "text": {"type": "mrkdwn", "text": "It ends now; the moderator's closing card follows in the thread."},
    "confirm": {"type": "plain_text", "text": "Stop it"},
    "deny": {"type": "plain_text", "text": "Keep going"},
    "style": "danger",
}


def card_controls(*, live: bool) -> Block:
    """The opening card's buttons: Stop and Status while the debate runs, Transcript always."""
    elements: list[Block] = []
    if live:
        elements.append(_button(STOP_ACTION, "⏹️ Stop", style="danger", confirm=STOP_CONFIRM))
        elements.append(_button(STATUS_ACTION, "📊 Status"))
    elements.append(_button(TRANSCRIPT_ACTION, "📜 Transcript"))
    return {"type": "actions", "block_id": BLOCK_ID, "elements": elements}
