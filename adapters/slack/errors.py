"""Errors the Slack front end raises.

SlackError
 ├── SlackConfigError          tokens or settings that cannot work (the message says what to set)
 ├── PermissionCheckError      who may start could not be checked (e.g. a user group lookup failed)
 ├── InstallationsUnavailable  a workspace's installation could not be read (the database away)
 └── SlackUnavailable          Slack did not answer who the bot is (it is failing)
"""

from core.outlasting import TRY_AGAIN


class SlackError(Exception):
    """Root of the Slack front end's errors; `str(error)` is fit to show a person."""


class SlackConfigError(SlackError):
    """The Slack front end cannot run with these tokens or settings."""


class PermissionCheckError(SlackError):
    """Whether someone may start a debate could not be decided."""


class InstallationsUnavailable(SlackError):
    """A workspace's installation (its bot token) could not be read in time: the database is away."""

    def __init__(self, detail: str) -> None:
        super().__init__(TRY_AGAIN)
        self.detail = detail


class SlackUnavailable(SlackError):
    """Slack did not answer `auth.test` for a request (a 5xx, no answer): it is failing right now."""

    def __init__(self, detail: str) -> None:
        super().__init__("Slack isn't answering right now; try again in a moment.")
        self.detail = detail
