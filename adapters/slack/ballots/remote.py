"""Reactions and clicks on the cards of debates another Rostra process runs, from Slack.

Slack sends each event and click to whichever worker its load balancer picked, which need not be
the one running the debate. The shared `RemoteReactions` passes reactions and clicks on; this
finds Slack's cards by the timestamps the sender recorded and maps reaction names to option keys.
When a window opens the owner also reads the card itself, so reactions made earlier count there too.
"""

from __future__ import annotations

from collections.abc import Mapping

from adapters.host import Host
from adapters.remote_votes import RemoteReactions
from adapters.slack.render.emoji import normalise_reaction, option_reactions
from adapters.slack.render.ops import vote_key
from adapters.stored_cards import StoredCard

PLATFORM = "slack"
TS_PREFIX = "ts:" + vote_key("")


def card_of(values: Mapping[str, str], ts: str) -> str | None:
    """The vote whose card was posted at `ts`, from the sender's recorded `ts:vote:<id>` values."""
    for key, value in values.items():
        if key.startswith(TS_PREFIX) and value == ts:
            return key.removeprefix(TS_PREFIX)
    return None


def _key_of(card: StoredCard, reaction: str) -> str | None:
    name = normalise_reaction(reaction)
    return next((k for k, n in option_reactions(card.options).items() if n == name), None)


class RemoteVotes(RemoteReactions):
    def __init__(self, rt: Host) -> None:
        super().__init__(rt, PLATFORM, card_of, _key_of)
