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

from adapters.click_votes import ENDED, UNAVAILABLE, vote_elsewhere, vote_here
from adapters.discord.inbound.answers import in_time, tell
from adapters.discord.inbound.once import first_delivery
from adapters.host import Host
from adapters.remote_votes import RemoteReactions
from core.models import VoteOption

log = logging.getLogger(__name__)


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


async def vote(
    rt: Host,
    debate_id: str,
    vote_id: str,
    key: str,
    user: discord.abc.User,
    remote: RemoteReactions | None = None,
) -> str:
    """Cast a click's vote (adapters/click_votes.py); what to tell the person. `remote` passes on
    votes for debates another process runs."""
    handle = rt.manager.get(debate_id)
    if handle is None or handle.done:  # another process runs it (a copy here taken over), or it ended
        if remote is None:
            return ENDED if handle is not None else UNAVAILABLE
        return await vote_elsewhere(remote, debate_id, vote_id, str(user.id), key, user.display_name)
    return await vote_here(handle, vote_id, str(user.id), key, user.display_name)


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
