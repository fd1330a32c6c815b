"""Rostra's platform-neutral debate engine.

Adapters build a `DebateSpec`, start it through the runtime's `DebateManager` with an
`EventSink`, and get a `DebateHandle` back (human votes and stop in, result out).
"""

from core.admission import Admission
from core.clock import Clock, DebateClock, FakeClock, RealClock
from core.errors import (
    AdmissionError,
    BallotClosedError,
    BallotError,
    DebateError,
    InvalidChoiceError,
    ModelCallError,
    ModelConfigError,
    SpecError,
    StoreError,
)
from core.events import Event
from core.manager import DebateManager
from core.ports import Binding, DebateRecord, EventSink, Store
from core.prepare import PreparedDebate
from core.session import DebateHandle, DebateResult, DebateStatusView
from core.spec import DebateSpec

__all__ = [
    "Admission",
    "AdmissionError",
    "BallotClosedError",
    "BallotError",
    "Binding",
    "Clock",
    "DebateClock",
    "DebateError",
    "DebateHandle",
    "DebateManager",
    "DebateRecord",
    "DebateResult",
    "DebateSpec",
    "DebateStatusView",
    "Event",
    "EventSink",
    "FakeClock",
    "InvalidChoiceError",
    "ModelCallError",
    "ModelConfigError",
    "PreparedDebate",
    "RealClock",
    "SpecError",
    "Store",
    "StoreError",
]
