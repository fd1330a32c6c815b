"""What the worker tests with a model outage share (the fake itself is tests/bot/conftest.py `claude`):
a worker's environment that speaks through it with the real client (agno's Claude, the Anthropic
SDK), and the outage."""

from __future__ import annotations

from testkit.anthropic_api import FakeAnthropic
from testkit.server import Fault

OUTAGE = 30.0  # seconds the model answers nothing but 529 overloaded
PAUSED = "The model is not answering"  # what the thread is told once the debate waits for it
BACK = "The debate goes on."  # what it is told when the model answers again


def on_claude(claude: FakeAnthropic) -> dict[str, str | None]:
    """A worker's environment for the real Claude client against the fake (None: unset). Two
    failures in a row are an outage, so the test need not wait through six; three rounds are enough
    to go on after it."""
    return {
        "ROSTRA_MODEL__DEFAULT": "anthropic:claude-sonnet-5-5",
        "ROSTRA_MODEL__SCRIPT": None,
        "ROSTRA_MODEL__ANTHROPIC_BASE_URL": claude.base_url,
        "ROSTRA_MODEL__FAILURE_LIMIT": "2",
        "ROSTRA_LIMITS__MAX_ROUNDS": "3",
        "ANTHROPIC_API_KEY": "sk-test-offline",
    }


def overload(claude: FakeAnthropic, now: float) -> float:
    """Claude answers 529 overloaded to every request for OUTAGE seconds from `now` (monotonic);
    when it ends."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    claude.add_fault(Fault(matches=lambda r: True, status=529, body=body, times=None, until=now + OUTAGE))
    return now + OUTAGE
