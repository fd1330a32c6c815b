"""Discord front end (discord.py app commands). Importing this package stays light: discord.py
loads when `create_bot` is called, because `bot.config` imports the settings on every CLI run."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.discord.app import RostraBot
    from adapters.host import Host


def create_bot(rt: Host) -> RostraBot:
    """The `commands.Bot` for `rt`, not yet started (see `adapters.discord.app.create_bot`)."""
    from adapters.discord.app import create_bot as _create_bot

    return _create_bot(rt)


__all__ = ["create_bot"]
