"""Button ballots (`slack.ballot: buttons`), the pure part: one button per option a person may vote
for while the card's window is open, each showing the people's count so far. The action ids are
fixed (`rostra_ballot:<option>`) and the value names the vote, so a click finds its ballot after a
restart too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from adapters.slack.render.ops import Block

ACTION_PREFIX = "rostra_ballot:"
BUTTON_TEXT_LIMIT = 75


def ballot_block(vote_id: str, options: Sequence[tuple[str, str]], counts: Mapping[str, int]) -> Block:
    """`options`: (key, the option as shown: its emoji and label)."""
    elements = []
    for key, shown in options:
        text = f"{shown} · {counts.get(key, 0)}"
        elements.append(
            {
                "type": "button",
                "action_id": ACTION_PREFIX + key,
                "text": {"type": "plain_text", "text": text[:BUTTON_TEXT_LIMIT], "emoji": True},
                "value": f"{vote_id}|{key}",
            }
        )
    return {"type": "actions", "block_id": f"rostra_ballot_{vote_id}", "elements": elements[:25]}


def read_value(value: str) -> tuple[str, str] | None:
    """A button's value → (vote id, option key)."""
    vote_id, sep, key = value.partition("|")
    return (vote_id, key) if sep and vote_id and key else None
