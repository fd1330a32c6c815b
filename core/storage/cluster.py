"""What every worker of one bot must agree on, kept in the store: who may start a debate where, which
inbound deliveries were seen already, and which workers are alive.

- Admission (`claims`, `cooldowns`): a start takes a claim on its channel in one transaction that
  also checks the limits (one debate per channel, the per-scope and bot-wide caps, the per-person
  cooldown), counting the running debates of every process and every pending claim. SQLite runs it
  inside the writer's `BEGIN IMMEDIATE` (the file's write lock); Postgres takes a transaction-scoped
  advisory lock first, so admissions in every process run one at a time (each statement then sees
  what the one before committed). A pending claim carries an expiry its worker's heartbeat renews:
  a worker that dies (SIGKILL) leaves a claim that lapses after one lease. The debate is created
  under its claim (one transaction, and under the advisory lock on Postgres): a worker paused past
  its claim's lapse, woken after another start took the channel, finds its claim gone and creates
  nothing. A claim linked to its debate counts as long as that debate is running; it also finds the
  debate by the channel it was asked for in (a Discord thread's parent channel, say).
- Idempotency (`deliveries`): an inbound key (Slack event_id or trigger_id, a Discord interaction
  id) is inserted if absent or expired, atomically; only the caller that inserted it goes on. Rows
  expire after their TTL and are purged on the heartbeat, a bounded number at a time.
- Liveness (`workers`): a process that joins under a role (a platform's workers) keeps a row whose
  expiry its heartbeat renews; `live_workers(role)` counts the rows not expired. This is how the
  platforms' rate budgets hold for the whole deployment: each worker spends its platform's published
  budget divided by the live workers of that role, recounted every heartbeat, so the split adapts as
  workers come and go (a dead worker's share returns one lease after its last heartbeat). Discord's
  global budget belongs to the bot token, which every Discord worker shares: split the same way.
- Spending (read only): what a server's or workspace's debates spent today, whichever worker ran
  them, read from their stored events (the money each model call cost is on its event), so a daily
  budget per scope holds for the whole deployment (`core.spending`).

The statements are written once and spelled per dialect as core.storage.sql does; the admission's
logic is written once as a sequence of statements (`admit_steps`) that each driver runs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Generator, Iterable
from dataclasses import dataclass, fields
from typing import Any

from core.events import Event, load_event
from core.ports import AdmissionAsk, Claimed, Refused
from core.storage import sql

log = logging.getLogger(__name__)

ADMISSION_LOCK = 7_303_373  # Postgres: the advisory lock every admission takes first
PURGE_BATCH = 500  # expired delivery keys removed per heartbeat at most
WORKER_FORGOTTEN_AFTER = 3600.0  # a dead worker's row is removed this long after it lapsed


@dataclass(frozen=True)
class ClusterStatements:
    void_cooldowns: str
    purge_claims: str
    running_in_channel: str
    pending_in_channel: str
    in_scope: str
    in_total: str
    cooldown_of: str
    insert_claim: str
    set_cooldown: str
    claim_started: str
    release_claim: str
    cooldown_gone: str
    cooldown_back: str
    renew_claims: str
    drop_claims: str
    first_delivery: str
    forget_delivery: str
    purge_deliveries: str
    worker_alive: str
    worker_gone: str
    live_workers: str
    purge_workers: str
    usage_in_scope: str


_CLUSTER = ClusterStatements(
    # the cooldowns of starts that never became a debate, for whichever worker the person asks next:
    # their claim lapsed unconfirmed (its worker died, froze, or could not give it back with the
    # store away), and the person holds no other claim, pending or of a running debate. (A cooldown
    # is only set when the one before had run out, so none is the right one to go back to.)
    void_cooldowns=(
        "DELETE FROM cooldowns WHERE EXISTS (SELECT 1 FROM claims c WHERE c.platform = cooldowns.platform"
        " AND c.person = cooldowns.person AND c.debate_id = '' AND c.expires_at <= $1)"
        " AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.platform = cooldowns.platform"
        " AND c.person = cooldowns.person AND (c.debate_id <> '' OR c.expires_at > $1))"
    ),
    # claims that count no more: pending ones whose worker stopped renewing them, linked ones whose
    # debate is no longer running
    purge_claims=(
        "DELETE FROM claims WHERE (debate_id = '' AND expires_at <= $1) OR (debate_id <> '' AND NOT EXISTS"
        " (SELECT 1 FROM debates d WHERE d.id = claims.debate_id AND d.status = 'running'))"
    ),
    running_in_channel=(
        "SELECT * FROM debates WHERE status = 'running' AND platform = $1 AND (channel = $2 OR id IN"
        " (SELECT debate_id FROM claims WHERE platform = $1 AND channel = $2 AND debate_id <> ''))"
        " ORDER BY created_at DESC, id LIMIT 1"
    ),
    pending_in_channel=(
        "SELECT COUNT(*) FROM claims WHERE platform = $1 AND channel = $2 AND debate_id = ''"
        " AND expires_at > $3"
    ),
    in_scope=(
        "SELECT (SELECT COUNT(*) FROM debates WHERE status = 'running' AND platform = $1 AND scope = $2)"
        " + (SELECT COUNT(*) FROM claims WHERE platform = $1 AND scope = $2 AND debate_id = ''"
        " AND expires_at > $3)"
    ),
    in_total=(
        "SELECT (SELECT COUNT(*) FROM debates WHERE status = 'running')"
        " + (SELECT COUNT(*) FROM claims WHERE debate_id = '' AND expires_at > $1)"
    ),
    cooldown_of="SELECT started_at FROM cooldowns WHERE platform = $1 AND person = $2",
    insert_claim=(
        "INSERT INTO claims (platform, channel, scope, person, worker, debate_id, expires_at)"
        " VALUES ($1, $2, $3, $4, $5, '', $6)"
    ),
    set_cooldown=(
        "INSERT INTO cooldowns (platform, person, started_at) VALUES ($1, $2, $3)"
        " ON CONFLICT (platform, person) DO UPDATE SET started_at = excluded.started_at"
    ),
    claim_started=(  # its row gone: it lapsed and was purged (another start may hold the channel)
        "UPDATE claims SET debate_id = $3 WHERE platform = $1 AND channel = $2 AND worker = $4"
        " AND debate_id = '' RETURNING channel"
    ),
    release_claim=(
        "DELETE FROM claims WHERE platform = $1 AND channel = $2 AND worker = $3 AND debate_id = ''"
    ),
    cooldown_gone="DELETE FROM cooldowns WHERE platform = $1 AND person = $2 AND started_at = $3",
    cooldown_back=(
        "UPDATE cooldowns SET started_at = $4 WHERE platform = $1 AND person = $2 AND started_at = $3"
    ),
    renew_claims="UPDATE claims SET expires_at = $1 WHERE worker = $2 AND debate_id = ''",
    drop_claims="DELETE FROM claims WHERE worker = $1 AND debate_id = ''",
    # inserted if absent, or taken over once expired: a row back means this caller is the first
    first_delivery=(
        "INSERT INTO deliveries (key, expires_at) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE"
        " SET expires_at = excluded.expires_at WHERE deliveries.expires_at <= $3 RETURNING key"
    ),
    forget_delivery="DELETE FROM deliveries WHERE key = $1",
    purge_deliveries=(
        "DELETE FROM deliveries WHERE key IN"
        " (SELECT key FROM deliveries WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)"
    ),
    worker_alive=(
        "INSERT INTO workers (id, role, alive_until) VALUES ($1, $2, $3)"
        " ON CONFLICT (id) DO UPDATE SET role = excluded.role, alive_until = excluded.alive_until"
    ),
    worker_gone="DELETE FROM workers WHERE id = $1",
    live_workers="SELECT COUNT(*) FROM workers WHERE role = $1 AND alive_until > $2",
    purge_workers="DELETE FROM workers WHERE alive_until <= $1",
    # the events that carry a model call's cost ($4: their kinds), of the scope's debates, since $3
    # (an ISO time: events are stamped in UTC); a debate running since yesterday counts too
    usage_in_scope=(
        "SELECT e.payload FROM debates d JOIN events e ON e.debate_id = d.id"
        " WHERE d.platform = $1 AND d.scope = $2 AND (d.status = 'running' OR d.updated_at >= $3)"
        " AND e.at >= $3 AND e.kind {any}$4{any_end}"
    ),
)


def loaded(payloads: Iterable[str]) -> list[Event]:
    """Events from stored payloads, each that does not load left out (said in the log)."""
    events = []
    for payload in payloads:
        try:
            events.append(load_event(payload))
        except ValueError as exc:
            log.warning("a stored event does not load, left out of the day's spending: %s", exc)
    return events


def _spelled(words: dict[str, str], numbered: str) -> ClusterStatements:
    return ClusterStatements(
        **{f.name: sql.spell(getattr(_CLUSTER, f.name), words, numbered) for f in fields(ClusterStatements)}
    )


POSTGRES = _spelled(sql.POSTGRES_WORDS, sql.POSTGRES_NUMBERED)
SQLITE = _spelled(sql.SQLITE_WORDS, sql.SQLITE_NUMBERED)

Step = tuple[str, tuple[Any, ...]]
Steps = Generator[Step, list[Any], Any]


def run_steps(steps: Steps, execute: Callable[[str, tuple[Any, ...]], list[Any]]) -> Any:
    """Run the statements one after the other on a blocking connection; the steps' result."""
    try:
        statement, params = next(steps)
        while True:
            statement, params = steps.send(execute(statement, params))
    except StopIteration as done:
        return done.value


async def run_steps_async(steps: Steps, execute: Callable[..., Awaitable[list[Any]]]) -> Any:
    """The same on an asyncpg connection (`execute` is its `fetch`)."""
    try:
        statement, params = next(steps)
        while True:
            statement, params = steps.send(list(await execute(statement, *params)))
    except StopIteration as done:
        return done.value


def admit_steps(c: ClusterStatements, ask: AdmissionAsk, *, worker: str, now: float, lease: float) -> Steps:
    """The admission, statement by statement (each driver runs them in one locked transaction):
    the claim taken and the cooldown started, or why not."""
    yield c.void_cooldowns, (now,)
    yield c.purge_claims, (now,)
    running = yield c.running_in_channel, (ask.platform, ask.channel)
    if running:
        return Refused("running", topic=str(running[0]["topic"]), channel=str(running[0]["channel"]))
    pending = yield c.pending_in_channel, (ask.platform, ask.channel, now)
    if int(pending[0][0]):
        return Refused("starting")
    in_scope = yield c.in_scope, (ask.platform, ask.scope, now)
    if int(in_scope[0][0]) >= ask.max_per_scope:
        return Refused("scope", count=int(in_scope[0][0]))
    in_total = yield c.in_total, (now,)
    if int(in_total[0][0]) >= ask.max_total:
        return Refused("total", count=int(in_total[0][0]))
    last = yield c.cooldown_of, (ask.platform, ask.person)
    previous = float(last[0][0]) if last else None
    if previous is not None:
        wait = ask.cooldown - (now - previous)
        if wait > 0:
            return Refused("cooldown", wait=wait)
    yield c.insert_claim, (ask.platform, ask.channel, ask.scope, ask.person, worker, now + lease)
    yield c.set_cooldown, (ask.platform, ask.person, now)
    return Claimed(at=now, previous_start=previous)


def give_back_steps(c: ClusterStatements, claim: AdmissionAsk, claimed: Claimed, *, worker: str) -> Steps:
    """A failed start: its claim removed and the person's cooldown as it was before (unless a later
    start holds it now)."""
    yield c.release_claim, (claim.platform, claim.channel, worker)
    if claimed.previous_start is None:
        yield c.cooldown_gone, (claim.platform, claim.person, claimed.at)
    else:
        yield c.cooldown_back, (claim.platform, claim.person, claimed.at, claimed.previous_start)
    return None
