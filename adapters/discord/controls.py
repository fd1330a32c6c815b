"""Stop, Status and Transcript buttons on a debate's start card, working across restarts.

Each button's custom id carries the debate id (`rostra:stop:<id>`), and the bot registers the
button class as a dynamic item, so discord.py routes a click to it whatever message it is on and
whether or not this process drew that message. Stop asks for a confirmation first; every answer is
ephemeral. The work itself is `/debate stop`, `status` and `transcript`: the same checks (who may
stop) and the same answers.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Protocol

import discord

from adapters.discord.inbound.answers import in_time, tell
from adapters.discord.inbound.once import first_delivery
from adapters.host import Host
from core.errors import StoreUnavailable
from core.outlasting import STATUS_UNKNOWN

log = logging.getLogger(__name__)

PREFIX = "rostra"
STOP, CONFIRM, STATUS, TRANSCRIPT = "stop", "confirm", "status", "transcript"
LABELS = {STOP: "Stop", CONFIRM: "Yes, stop it", STATUS: "Status", TRANSCRIPT: "Transcript"}
STYLES = {
    STOP: discord.ButtonStyle.danger,
    CONFIRM: discord.ButtonStyle.danger,
    STATUS: discord.ButtonStyle.secondary,
    TRANSCRIPT: discord.ButtonStyle.secondary,
}
EMOJIS = {STOP: "⏹️", STATUS: "📊", TRANSCRIPT: "📜"}
ENDED = "This debate has ended. Its transcript is one click away: **Transcript**."
CONFIRM_TEXT = "Stop {debate} now? Its closing card follows in the thread."
CONFIRM_ANY = "this debate"  # while the database is away, its topic unknown


class CardActions(Protocol):
    """What the buttons do: the work of `/debate stop`, `status` and `transcript` (the bot's
    command group provides it; the buttons find it on the client, so they import no command)."""

    rt: Host

    async def stop(self, interaction: discord.Interaction) -> None: ...

    async def status(self, interaction: discord.Interaction) -> None: ...

    async def transcript(self, interaction: discord.Interaction, debate_id: str | None) -> None: ...


def custom_id(action: str, debate_id: str) -> str:
    return f"{PREFIX}:{action}:{debate_id}"


class CardButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"rostra:(?P<action>stop|confirm|status|transcript):(?P<debate>[A-Za-z0-9_-]{1,80})",
):
    def __init__(self, action: str, debate_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                label=LABELS[action],
                style=STYLES[action],
                emoji=EMOJIS.get(action),
                custom_id=custom_id(action, debate_id),
            )
        )
        self.action = action
        self.debate_id = debate_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> CardButton:
        return cls(match["action"], match["debate"])

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        rt: Host | None = getattr(interaction.client, "rt", None)
        return rt is None or await first_delivery(rt.store, interaction)  # one worker answers a click

    async def callback(self, interaction: discord.Interaction) -> None:
        commands: CardActions | None = getattr(interaction.client, "debate_commands", None)
        if commands is None:  # not Rostra's bot: nothing to do
            return
        await press(commands, interaction, self.action, self.debate_id)


async def press(commands: CardActions, interaction: discord.Interaction, action: str, debate_id: str) -> None:
    """One click: the transcript of any debate; stop and status only while it runs."""
    if action == TRANSCRIPT:
        await commands.transcript(interaction, debate_id)
        return
    try:
        record = await in_time(interaction, commands.rt.store.get_debate(debate_id))  # on any worker
        debate = f"the debate on **{record.topic}**" if record is not None else ""
    except StoreUnavailable:  # the database away: Status says so; a Stop is confirmed, then waits
        if action == STATUS:
            await tell(interaction, STATUS_UNKNOWN)
            return
        record, debate = None, CONFIRM_ANY
    handle = commands.rt.manager.get(debate_id)
    ended = (record is not None and record.status != "running") or (handle is not None and handle.done)
    if not debate or ended:
        await tell(interaction, ENDED)
        return
    if action == STATUS:
        await commands.status(interaction)
    elif action == STOP:
        confirm = discord.ui.View(timeout=None)
        confirm.add_item(CardButton(CONFIRM, debate_id))
        await tell(interaction, CONFIRM_TEXT.format(debate=debate), confirm)
    elif action == CONFIRM:
        log.info("debate %s: stop confirmed by %s", debate_id, interaction.user.id)
        await commands.stop(interaction)


def controls_view(debate_id: str) -> discord.ui.View:
    """The buttons for a debate's start card (persistent: no timeout)."""
    view = discord.ui.View(timeout=None)
    for action in (STOP, STATUS, TRANSCRIPT):
        view.add_item(CardButton(action, debate_id))
    return view


def transcript_view(debate_id: str) -> discord.ui.View:
    """What a finished debate's cards keep: Transcript."""
    view = discord.ui.View(timeout=None)
    view.add_item(CardButton(TRANSCRIPT, debate_id))
    return view


async def show_controls(thread: discord.Thread, message_id: int, debate_id: str, *, live: bool) -> None:
    """Put the buttons on the thread's opening card (only Transcript once the debate is over)."""
    view = controls_view(debate_id) if live else transcript_view(debate_id)
    try:
        await thread.get_partial_message(message_id).edit(view=view)
    except discord.HTTPException as exc:
        log.warning("debate %s: could not update the opening card's buttons: %s", debate_id, exc)
