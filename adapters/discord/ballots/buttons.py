"""Button ballots (`discord.ballot: buttons`): while a vote card's window is open it carries one
button per option; a click is that person's vote (one each, changeable, confirmed privately), and
the buttons are disabled when the window closes. No Add Reactions permission is needed.

The custom ids name the debate, the vote and the option (`rostra:ballot:<debate>:<vote>:<option>`)
and the bot registers the button class as a dynamic item, so clicks work after a restart too.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

import discord

from adapters.discord.inbound.answers import in_time, tell
from adapters.discord.inbound.once import first_delivery
from adapters.host import Host
from adapters.remote_votes import RemoteReactions
from core.errors import BallotClosedError, BallotError, StoreError
from core.models import VoteOption

log = logging.getLogger(__name__)

CLOSED = "Voting on this card has closed."
ENDED = "This debate has ended."
UNAVAILABLE = "Your vote could not be passed on just now; try again in a moment."


def ballot_id(debate_id: str, vote_id: str, key: str) -> str:
    return f"rostra:ballot:{debate_id}:{vote_id}:{key}"


class BallotButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"rostra:ballot:(?P<debate>[A-Za-z0-9_-]{1,40}):(?P<vote>[A-Za-z0-9_.-]{1,20}):(?P<key>[A-Za-z0-9_-]{1,20})",
):
    def __init__(
        self,
        debate_id: str,
        vote_id: str,
        key: str,
        *,
        label: str = "",
        emoji: str | None = None,
        disabled: bool = False,
    ) -> None:
        super().__init__(
            discord.ui.Button(
                label=label or key,
                emoji=emoji,
                style=discord.ButtonStyle.secondary,
                custom_id=ballot_id(debate_id, vote_id, key),
                disabled=disabled,
            )
        )
        self.debate_id, self.vote_id, self.key = debate_id, vote_id, key

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> BallotButton:
        return cls(match["debate"], match["vote"], match["key"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        rt: Host | None = getattr(interaction.client, "rt", None)
        return rt is None or await first_delivery(rt.store, interaction)  # one worker answers a click

    async def callback(self, interaction: discord.Interaction) -> None:
        rt: Host | None = getattr(interaction.client, "rt", None)
        if rt is None:
            return
        remote = getattr(interaction.client, "remote_votes", None)
        relay = remote if isinstance(remote, RemoteReactions) else None
        voted = vote(rt, self.debate_id, self.vote_id, self.key, interaction.user, relay)
        answer = await in_time(interaction, voted)
        await tell(interaction, answer)


def _label(options: Sequence[VoteOption], key: str) -> str:
    option = next((o for o in options if o.key == key), None)
    return f"{option.emoji} {option.label}".strip() if option is not None else key


async def vote(
    rt: Host,
    debate_id: str,
    vote_id: str,
    key: str,
    user: discord.abc.User,
    remote: RemoteReactions | None = None,
) -> str:
    """Cast a click's vote; what to tell the person. `remote` passes on votes for debates another
    process runs (and knows their cards' labels)."""
    handle = rt.manager.get(debate_id)
    if handle is None or handle.done:  # another process runs it (a copy here taken over), or it ended
        if remote is None:
            return ENDED if handle is not None else UNAVAILABLE
        return await vote_elsewhere(debate_id, vote_id, key, user, remote)
    ballot = handle.state.ballots.get(vote_id)
    options = ballot.options if ballot is not None else ()
    person = str(user.id)
    before = ballot.human_votes.get(person) if ballot is not None else None
    if before is not None and before.choice == key and handle.human_vote_open(vote_id):
        return f"You already voted {_label(options, key)}."
    try:
        await handle.cast_human_vote(vote_id, person, key, voter_name=user.display_name)
    except BallotClosedError:
        return CLOSED
    except BallotError as exc:
        return str(exc)
    if before is not None:
        return f"You changed your vote to {_label(options, key)}."
    return f"You voted {_label(options, key)}."


async def vote_elsewhere(
    debate_id: str, vote_id: str, key: str, user: discord.abc.User, remote: RemoteReactions
) -> str:
    """A click on a card of a debate another process runs: the vote goes to it through the store,
    as a reaction's does (`RemoteReactions.cast`: waited out while the store is away). The card's
    buttons are there only while its window is open, so the click is taken as a vote."""
    try:
        if not await remote.cast(debate_id, vote_id, str(user.id), key, user.display_name):
            return ENDED
        options = await remote.cards.options(debate_id, vote_id)
    except StoreError:  # the store did not answer (a failed cast says so in the log)
        return UNAVAILABLE
    return f"You voted {_label(options or (), key)}."


def ballot_view(
    debate_id: str, vote_id: str, options: Sequence[VoteOption], *, closed: bool = False
) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for option in options[:25]:
        view.add_item(
            BallotButton(
                debate_id,
                vote_id,
                option.key,
                label=option.label,
                emoji=option.emoji or None,
                disabled=closed,
            )
        )
    return view


async def show_buttons(
    thread: discord.Thread,
    message_id: int,
    debate_id: str,
    vote_id: str,
    options: Sequence[VoteOption],
    *,
    closed: bool = False,
) -> bool:
    """Put the ballot's buttons on its card (disabled once `closed`); whether Discord took them."""
    try:
        await thread.get_partial_message(message_id).edit(
            view=ballot_view(debate_id, vote_id, options, closed=closed)
        )
    except discord.HTTPException as exc:
        log.warning("debate %s: could not update the buttons of vote %s: %s", debate_id, vote_id, exc)
        return False
    return True
