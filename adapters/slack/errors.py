"""Errors the Slack front end raises.

SlackError
 ├── SlackConfigError       tokens or settings that cannot work (the message says what to set)
 └── PermissionCheckError   who may start could not be checked (e.g. a user group lookup failed)
"""


class SlackError(Exception):
    """Root of the Slack front end's errors; `str(error)` is fit to show a person."""


class SlackConfigError(SlackError):
    """The Slack front end cannot run with these tokens or settings."""


class PermissionCheckError(SlackError):
    """Whether someone may start a debate could not be decided."""
