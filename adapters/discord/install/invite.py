"""The Discord permissions Rostra asks for, why, and the invite URL that grants exactly them."""

from __future__ import annotations

from dataclasses import dataclass

import discord

SCOPES = ("bot", "applications.commands")


@dataclass(frozen=True)
class Needed:
    flag: str
    label: str
    why: str
    required: bool = True


NEEDED = (
    Needed("view_channel", "View Channels", "see the channels and threads where /debate is used"),
    Needed(
        "send_messages",
        "Send Messages",
        "post the result in the channel a debate was started from, and the start card there when the"
        " reply to /debate was private",
    ),
    Needed("create_public_threads", "Create Public Threads", "open one thread per debate"),
    Needed(
        "send_messages_in_threads",
        "Send Messages in Threads",
        "post the opening, vote and closing cards and notices in the debate thread",
    ),
    Needed("embed_links", "Embed Links", "cards are embeds"),
    Needed("attach_files", "Attach Files", "post files a debate produces"),
    Needed("add_reactions", "Add Reactions", "the bot's own reactions form the people's ballot"),
    Needed("read_message_history", "Read Message History", "Discord requires it to react to messages"),
    Needed(
        "manage_threads",
        "Manage Threads",
        "delete a thread it opened for a debate that then could not start (without it the thread"
        " stays, saying why it is empty)",
        required=False,
    ),
    Needed(
        "manage_webhooks",
        "Manage Webhooks",
        "personas post through one webhook per channel, each under its own name and avatar"
        " (without it they appear as the bot's embeds)",
        required=False,
    ),
)


def invite_permissions() -> discord.Permissions:
    return discord.Permissions(**{n.flag: True for n in NEEDED})


def invite_url(client_id: int) -> str:
    return discord.utils.oauth_url(client_id, permissions=invite_permissions(), scopes=SCOPES)


_FOR_BALLOTS = frozenset({"add_reactions", "read_message_history"})
_FOR_FILES = frozenset({"attach_files"})
_FOR_A_NEW_THREAD = frozenset({"create_public_threads", "send_messages"})
"""Started in a thread, the debate stays there: no thread to open, no result for a parent channel."""


def missing_permissions(
    granted: discord.Permissions, *, new_thread: bool, ballots: bool = True, files: bool = True
) -> list[str]:
    """Labels of the required permissions the bot lacks in a channel (`interaction.app_permissions`)
    for this debate: `new_thread` when it is started from a channel (which then gets the result),
    `ballots` when people vote with reactions, `files` when it posts a file."""
    skip: set[str] = set()
    if not new_thread:
        skip |= _FOR_A_NEW_THREAD
    if not ballots:
        skip |= _FOR_BALLOTS
    if not files:
        skip |= _FOR_FILES
    return [n.label for n in NEEDED if n.required and n.flag not in skip and not getattr(granted, n.flag)]
