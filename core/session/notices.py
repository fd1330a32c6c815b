"""What the session itself tells a debate's thread, and when.

Two notices wait for their moment: the one a resumed debate owes (why it stopped, a takeover) is
said once the replay has caught up, before the first new event; the one about a store outage is
said once the store takes writes again, after the event that got through. The rest are the lines a
debate that stops on its own ends with.
"""

from __future__ import annotations

from core.events import Event, Notice


class PendingNotices:
    """The notices owed to the thread, each said once at its moment."""

    def __init__(self, resume_notice: Notice | None = None) -> None:
        self._resume = resume_notice
        self._store_back: Notice | None = None

    def before(self, event: Event) -> Notice | None:
        """The resumed debate's notice, owed before the first new event (unless that is a notice)."""
        if self._resume is None or isinstance(event, Notice):
            return None
        notice, self._resume = self._resume, None
        return notice

    def store_back(self, waited: float) -> None:
        """The store takes writes again after `waited` seconds: the thread is told after this event."""
        self._store_back = Notice(
            level="warning",
            code="store_paused",
            message=f"Paused for {waited:.0f} s: Rostra's database was unavailable. Nothing was lost;"
            " the debate goes on.",
        )

    def after(self) -> Notice | None:
        """The outage notice, once, after the event that got through."""
        notice, self._store_back = self._store_back, None
        return notice


def store_stopped(failure: str) -> Notice:
    """The store stayed unavailable: the debate stops here and goes on once it is back."""
    message = f"This debate stopped: {failure}. It goes on from here once the database is back."
    return Notice(level="error", code="store_unavailable", message=message)


def platform_stopped(failure: str) -> Notice:
    """The platform stayed unavailable past the front end's limit: the debate stops, resumable."""
    message = f"This debate stopped: {failure}. Resume it once the platform is back."
    return Notice(level="error", code="platform_unavailable", message=message)


def model_stopped(failure: str) -> Notice:
    """The model provider stayed unavailable past the outage limit: the debate stops, resumable."""
    message = f"This debate stopped: {failure}. Resume it once the model answers again."
    return Notice(level="error", code="model_unavailable", message=message)


def cannot_resume(reason: Exception) -> Notice:
    """The format took another path than the stored log (its code or the config changed)."""
    message = f"This debate could not be resumed after a restart: {reason}."
    return Notice(level="error", code="debate_failed", message=message)


def model_down(reason: str) -> Notice:
    """The model provider is down for this debate (a refused key, failure after failure)."""
    message = f"This debate stopped: {reason}. Nothing more can be said until the model answers again."
    return Notice(level="error", code="model_down", message=message)


def failed(error: BaseException) -> Notice:
    """The debate hit an error it cannot go on from."""
    return Notice(level="error", code="debate_failed", message=f"The debate hit an error: {error}")
