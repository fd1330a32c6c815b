"""Slack front end (slack-bolt, async). Importing this package stays light: Bolt loads on use."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.host import Host
    from adapters.slack.app import SlackApp
    from adapters.slack.install.installations import OAuthStores


def create_app(
    rt: Host, *, socket_mode: bool | None = None, oauth_stores: OAuthStores | None = None
) -> SlackApp:
    """The Bolt `AsyncApp` for `rt` (see `adapters.slack.app.create_app`)."""
    from adapters.slack.app import create_app as _create_app

    return _create_app(rt, socket_mode=socket_mode, oauth_stores=oauth_stores)


__all__ = ["create_app"]
