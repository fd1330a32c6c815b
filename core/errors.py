"""Errors the core raises.

DebateError
 ├── SpecError            a debate request is invalid (the message is shown to the person as is)
 ├── ModelConfigError     a model string cannot be used (unknown provider, missing package or key)
 ├── ModelCallError       one model call failed (the engine retries or falls back)
 ├── StoreError           the event log refused a write
 │    ├── StoreUnavailable    a transient fault (locked, busy, disk full, connection lost): retry
 │    ├── StoreGaveUp         the store stayed unavailable past storage.outage_limit
 │    ├── LeaseLost           another process owns the debate now: this one may not write it
 │    ├── ClaimLapsed         a start's claim on its channel lapsed before its debate was created
 │    └── UnreadableDebate    a stored debate (its row or an event) no longer loads
 ├── PlatformUnavailable  the chat platform cannot be reached now: tried again later
 ├── NowhereToRun         where a debate ran is gone for good: it is closed, shown nowhere
 ├── AdmissionError       a start was refused by policy (cooldown, one per channel, caps)
 └── BallotError          a human vote was refused
      ├── BallotClosedError   no human window is open for that vote
      └── InvalidChoiceError  the choice is not one of the ballot's options
"""


class DebateError(Exception):
    """Root of every error the core raises."""


class SpecError(DebateError):
    """The debate request is invalid; `str(error)` is a message for the person who sent it."""


class ModelConfigError(DebateError):
    """A configured model cannot be used."""


class ModelCallError(DebateError):
    """A single model call failed; `reason` is the cause without the speaker's label."""

    def __init__(self, label: str, reason: str) -> None:
        super().__init__(f"{label}: {reason}")
        self.label = label
        self.reason = reason


class ModelOutage(DebateError):
    """The model provider is down for this debate (a refused key, or failure after failure): the
    debate ends `failed` with `reason` instead of going on with fallbacks; or, `resumable`, it was
    unavailable past the outage limit: the debate stops `interrupted`, to go on later."""

    def __init__(self, reason: str, *, resumable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.resumable = resumable


class PlatformUnavailable(DebateError):
    """The chat platform cannot be reached now (it answers 5xx, or not at all): what needed it is
    tried again later (a debate to take over stays resumable)."""


class NowhereToRun(DebateError):
    """Where a debate ran is gone for good (its workspace removed the app): a debate found to take
    over there is closed as `stopped` with `message` as the reason, and shown nowhere."""


class StoreError(DebateError):
    """The store refused a write."""


class StoreUnavailable(StoreError):
    """A transient store fault (locked, busy, disk full, connection lost): the write may be retried."""


class StoreGaveUp(StoreError):
    """The store stayed unavailable longer than the configured limit."""


class LeaseLost(StoreError):
    """This process does not own the debate (any more): its writes are refused."""


LAPSED = "Starting it took so long that its place in this channel lapsed; try again."


class ClaimLapsed(StoreError):
    """A start's claim on its channel lapsed before its debate was created (its process paused past a
    lease, and another start may hold the channel now): the debate was not created."""

    def __init__(self) -> None:
        super().__init__(LAPSED)


class UnreadableDebate(StoreError):
    """A stored debate (its row or one of its events) no longer loads: listings leave it out and
    name it; reading it alone says so in one line."""

    def __init__(self, debate_id: str, why: str) -> None:
        super().__init__(f"Debate {debate_id} cannot be read: {why}")
        self.debate_id = debate_id
        self.why = why


class AdmissionError(DebateError):
    """A debate start was refused by policy."""


TOO_MANY_DEBATES = "Too many debates are running right now; try again when one ends."
"""The refusal when `limits.max_concurrent_debates` are running (admission and the manager say it)."""


class BallotError(DebateError):
    """A human vote was refused."""


class BallotClosedError(BallotError):
    """No human window is open for that vote."""


class InvalidChoiceError(BallotError):
    """The choice is not one of the ballot's options."""
