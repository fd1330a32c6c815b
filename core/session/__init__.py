"""One running debate, split by concern.

- `run`: the session itself: its task, stop, shutdown, and the error funnel (whatever happens inside
  the format, a `DebateCompleted` is emitted and the stored status is updated).
- `emit`: the typed emit path (stamp, store, apply to the state, then the sink), in one order.
- `replaying`: a resumed debate catching up with its stored log, and what its vote windows ask.
- `outage`: store writes with transient faults waited out; an outage past the limit or a lost lease.
- `notices`: what the session itself tells the thread (a resume, a pause, a failure) and when.
- `ending`: closing a turn or a ballot left open, the summary line, the status each ending stores.
- `handle`: what a front end holds while a debate runs; `results`: what it gets back.
"""

from core.session.ending import STATUS_OF_REASON
from core.session.handle import DebateHandle
from core.session.results import DebateResult, DebateStatusView, status_from_log
from core.session.run import DebateSession, real_error

__all__ = [
    "STATUS_OF_REASON",
    "DebateHandle",
    "DebateResult",
    "DebateSession",
    "DebateStatusView",
    "real_error",
    "status_from_log",
]
