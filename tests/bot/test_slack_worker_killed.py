"""A Slack worker killed with SIGKILL while the other worker holds the requests for its debate: two
real `rostra slack --http` workers on one database (SQLite and Postgres), as on two machines (only
the leases tell who lives). The worker that did not run the debate answers Status from the store,
records the starter's Stop, takes the debate over once the dead worker's lease runs out, and applies
the Stop; the thread shows every turn once, none lost and none doubled. A worker paused (SIGSTOP)
instead, with turns it still owed Slack, shows none of them when it wakes after the takeover. One
killed while Claude is overloaded for 30 s has its debate waited out and finished by the other."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.events import DebateCompleted, Event, Notice, TurnCompleted, VoteCast, VoteWithdrawn
from core.ports import DebateRecord
from core.recovery import TAKEN_OVER
from core.settings import StorageSettings
from core.storage import open_store
from testkit.anthropic_api import FakeAnthropic
from testkit.slack_api import FakeSlack
from testkit.slack_world import ALICE, BOB, CHANNEL, SCRIPT, envelope, mention_event, reaction_event
from tests.bot.freezing import freeze, wake
from tests.bot.model_outage import BACK, PAUSED, on_claude, overload
from tests.bot.slack_cluster import (
    Worker,
    buttons,
    ephemerals,
    owner_and_other,
    owner_pid,
    running_card,
    running_workers,
    status_of,
    told,
    worker_env,
)
from tests.helpers import write_script

pytestmark = pytest.mark.slow

LEASE, HEARTBEAT = 6.0, 1.0
SLACK_ROOM = 10.0  # seconds a loaded machine may add to a takeover
TOPIC = "Should cities ban cars?"
# each turn says something of its own and takes a second: turns are posted while the test watches
PACED: dict[str, Any] = {
    **SCRIPT,
    "proposition": [{"say": f"Proposition, turn {i}: streets for people.", "delay": 1.5} for i in range(9)],
    "opposition": [{"say": f"Opposition, turn {i}: people need to work.", "delay": 1.5} for i in range(9)],
}


def _envs(tmp_path: Path, api: FakeSlack, storage_url: str) -> list[dict[str, str]]:
    script = write_script(tmp_path, PACED)
    return [
        worker_env(
            storage_url,
            script,
            api,
            {
                "ROSTRA_STORAGE__LEASE_SECONDS": str(LEASE),
                "ROSTRA_STORAGE__HEARTBEAT_SECONDS": str(HEARTBEAT),
                "ROSTRA_INSTANCE": f"machine-{n}",  # as on two machines: a dead pid is not seen
                # requests left in the store come slowly by the vote loop (a poll every 3 s on SQLite,
                # a missed NOTIFY's catch-up on Postgres): only a prompt takeover makes the stop prompt
                "ROSTRA_STORAGE__POLL_SECONDS": "3",
            },
        )
        for n in range(2)
    ]


@pytest.fixture
def workers(tmp_path: Path, api: FakeSlack, storage_url: str) -> Iterator[list[Worker]]:
    with running_workers(_envs(tmp_path, api, storage_url), tmp_path / "stderr.log") as started:
        yield started


@pytest.fixture
def claude_workers(
    tmp_path: Path, api: FakeSlack, storage_url: str, claude: FakeAnthropic
) -> Iterator[list[Worker]]:
    """The two workers, speaking through Claude's real client against the local fake."""
    envs = _envs(tmp_path, api, storage_url)
    for env in envs:
        for name, value in on_claude(claude).items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
    with running_workers(envs, tmp_path / "stderr.log") as started:
        yield started


def _turns_shown(api: FakeSlack, card: dict[str, Any]) -> list[tuple[str, str]]:
    """The turns the thread shows, oldest first: each message's turn (from its metadata) and text."""
    shown = []
    for message in api.thread(CHANNEL, card["ts"]):
        key = str(((message.get("metadata") or {}).get("event_payload") or {}).get("key", ""))
        if key.startswith("turn:"):
            shown.append((key.removeprefix("turn:"), str(message.get("text", ""))))
    return shown


async def _each_shown_once(
    api: FakeSlack, card: dict[str, Any], stored: list[TurnCompleted], *, settle: float
) -> None:
    """The thread shows each stored turn once, in order, whole (not a draft), and still does after
    `settle` seconds (time for a doubled message, if there were one)."""
    await api.wait_until(lambda: len(_turns_shown(api, card)) >= len(stored), within=30)
    await asyncio.sleep(settle)
    shown = _turns_shown(api, card)
    assert [turn for turn, _ in shown] == [e.turn_id for e in stored]  # each once, in order
    for (_, text), turn in zip(shown, stored, strict=True):
        assert turn.text in text and not text.endswith("…")


async def test_a_stop_received_while_the_owner_lies_dead_is_applied_by_the_worker_that_takes_over(
    api: FakeSlack, workers: list[Worker], storage_url: str
) -> None:
    await workers[0].event(json.dumps(envelope(mention_event(f"debate {TOPIC}"))))
    card = await running_card(api, CHANNEL)
    owner, other = await owner_and_other(workers, storage_url, TOPIC)
    await api.wait_until(lambda: len(_turns_shown(api, card)) >= 2, within=60)
    owner.kill()
    killed_at = time.time()

    # while the owner lies dead: Status from the store, and the starter's Stop recorded there
    await other.event(json.dumps(envelope(mention_event("status", user=BOB))))
    status = await told(api, BOB, 1)
    assert f"*{TOPIC}*" in status and "phase" in status
    await other.event(json.dumps(envelope(mention_event("stop"))))
    said = await told(api, ALICE, 1, within=60)
    assert said.startswith((f"Stopping the debate on *{TOPIC}*", f"Asked the debate on *{TOPIC}* to stop"))

    # taken over once the lease ran out, and stopped: the card loses its buttons
    await api.wait_until(lambda: "rostra_card_status" not in buttons(api.top_level(CHANNEL)[0]), within=90)
    record, events = await _stored(storage_url)
    assert record.status == "stopped"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    ends = [e for e in events if isinstance(e, DebateCompleted)]
    assert len(ends) == 1 and ends[0].reason == "stopped"
    notices = [i for i, e in enumerate(events) if isinstance(e, Notice) and e.message == TAKEN_OVER]
    assert len(notices) == 1
    # taken over within the lease and a heartbeat (and room for a loaded machine)
    assert events[notices[0]].at.timestamp() - killed_at < LEASE + HEARTBEAT + SLACK_ROOM
    # the stop is the new owner's first act: no turn is spoken in full after the takeover (at most
    # the one it cut short, shown as interrupted)
    after = [e for e in events[notices[0] :] if isinstance(e, TurnCompleted)]
    assert [e.interrupted for e in after] in ([], [True])
    stored = [e for e in events if isinstance(e, TurnCompleted)]
    await _each_shown_once(api, card, stored, settle=1.0)


async def test_a_worker_paused_owing_slack_turns_shows_none_of_them_when_it_wakes_after_a_takeover(
    api: FakeSlack, workers: list[Worker], storage_url: str
) -> None:
    """Slack fails the owner's posts and edits for a while, so it holds turns it has not shown; it is
    frozen (SIGSTOP) and the starter stops the debate through the other worker, which takes it over
    and shows what is stored. Woken (SIGCONT), the old owner shows nothing of what it held."""
    await workers[0].event(json.dumps(envelope(mention_event(f"debate {TOPIC}"))))
    card = await running_card(api, CHANNEL)
    owner, other = await owner_and_other(workers, storage_url, TOPIC)
    await api.wait_until(lambda: len(_turns_shown(api, card)) >= 2, within=60)
    for method in ("chat.postMessage", "chat.update"):
        api.fail_next(method, status=503, error="service_unavailable", for_seconds=4.0)
    await asyncio.sleep(2.5)  # a turn ends meanwhile: the owner owes it
    freeze(owner.process, storage_url)
    try:
        await other.event(json.dumps(envelope(mention_event("stop"))))
        said = await told(api, ALICE, 1, within=60)
        assert said.startswith(
            (f"Stopping the debate on *{TOPIC}*", f"Asked the debate on *{TOPIC}* to stop")
        )
        await api.wait_until(
            lambda: "rostra_card_status" not in buttons(api.top_level(CHANNEL)[0]), within=90
        )
    finally:
        wake(owner.process)
    store = await open_store(storage_url, StorageSettings(url=storage_url))
    try:
        (record,) = await store.list_debates()
        stored = [e for e in await store.events(record.id) if isinstance(e, TurnCompleted)]
    finally:
        await store.close()
    assert record.status == "stopped"
    await _each_shown_once(api, card, stored, settle=LEASE)  # time for the woken worker to post, if it would
    assert owner.process.poll() is None  # awake, not crashed


async def _stored(storage_url: str) -> tuple[DebateRecord, list[Event]]:
    """The (one) debate's record and its stored events."""
    store = await open_store(storage_url, StorageSettings(url=storage_url))
    try:
        (record,) = await store.list_debates()
        return record, await store.events(record.id)
    finally:
        await store.close()


async def _taken_over_from(owner: Worker, storage_url: str) -> None:
    """Until the other worker holds the debate (its owner frozen: the lease runs out)."""
    deadline = time.monotonic() + LEASE + HEARTBEAT + SLACK_ROOM + 10
    while await owner_pid(storage_url, TOPIC) == owner.process.pid:
        assert time.monotonic() < deadline, "the debate was never taken over"
        await asyncio.sleep(0.2)


async def _completed(storage_url: str, deadline: float, never: str) -> list[Event]:
    """The (one) debate's stored events once it has ended (by `deadline`, else `never`): completed."""
    store = await open_store(storage_url, StorageSettings(url=storage_url))
    try:
        (record,) = await store.list_debates()
        while (current := await store.get_debate(record.id)) is not None and current.status == "running":
            assert time.monotonic() < deadline, never
            await asyncio.sleep(0.5)
        assert current is not None and current.status == "completed", current
        return await store.events(record.id)
    finally:
        await store.close()


def _said(api: FakeSlack, card: dict[str, Any], words: str) -> list[str]:
    texts = [str(m.get("text", "")) for m in api.thread(CHANNEL, card["ts"])]
    return [text for text in texts if words in text]


async def test_a_worker_killed_while_claude_is_overloaded_has_its_debate_waited_out_by_the_other(
    api: FakeSlack, claude_workers: list[Worker], claude: FakeAnthropic, storage_url: str
) -> None:
    """Claude overloaded for 30 s from the first turn: the thread is told the debate waits; its
    worker is killed meanwhile. The other takes the debate over, waits the model out without saying
    so again, and plays it to its end: each stored turn shown once and whole, the thread told it went
    on, nothing failed."""
    await claude_workers[0].event(json.dumps(envelope(mention_event(f"debate {TOPIC}"))))
    card = await running_card(api, CHANNEL)
    owner, _ = await owner_and_other(claude_workers, storage_url, TOPIC)
    await api.wait_until(lambda: len(_turns_shown(api, card)) >= 1, within=60)
    until = overload(claude, time.monotonic())
    await api.wait_until(lambda: bool(_said(api, card, PAUSED)), within=30)
    owner.kill()

    deadline = until + LEASE + HEARTBEAT + SLACK_ROOM + 60
    events = await _completed(storage_url, deadline, "the debate never ended after the model came back")
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len([e for e in events if isinstance(e, DebateCompleted)]) == 1
    assert [e for e in events if isinstance(e, Notice) and e.message == TAKEN_OVER]
    stored = [e for e in events if isinstance(e, TurnCompleted)]
    await _each_shown_once(api, card, stored, settle=1.0)
    assert len(_said(api, card, BACK)) == 1  # the thread was told the debate went on
    assert len(_said(api, card, PAUSED)) == 1  # that it waits: once, not again after the takeover
    assert not _said(api, card, "failed")


SLACK_DOWN = 30.0
DOWN_METHODS = (
    "chat.postMessage",
    "chat.update",
    "chat.delete",
    "chat.postEphemeral",
    "reactions.add",
    "reactions.get",
    "conversations.replies",
)


async def test_slack_down_30_s_while_the_owner_is_frozen_the_other_shows_the_debate_once_slack_is_back(
    api: FakeSlack, workers: list[Worker], storage_url: str
) -> None:
    """Slack answers 503 to everything the debate does for 30 s; meanwhile the debate's worker is
    frozen (SIGSTOP) until the debate has ended elsewhere. The other worker takes it over inside the
    outage, waits Slack out and plays the debate to its end: once Slack is back the thread shows every
    stored turn once and whole, no half-written message, no failure; a frozen owner woken afterwards
    shows nothing more. (Killing it instead is the same takeover without the waking.)"""
    await workers[0].event(json.dumps(envelope(mention_event(f"debate {TOPIC}"))))
    card = await running_card(api, CHANNEL)
    owner, _ = await owner_and_other(workers, storage_url, TOPIC)
    await api.wait_until(lambda: len(_turns_shown(api, card)) >= 2, within=60)
    back = time.monotonic() + SLACK_DOWN
    for method in DOWN_METHODS:
        api.fail_next(method, status=503, error="service_unavailable", for_seconds=SLACK_DOWN)
    await asyncio.sleep(4.0)  # the owner meets the outage and holds what it could not show
    freeze(owner.process, storage_url)
    try:
        deadline = back + LEASE + HEARTBEAT + SLACK_ROOM + 90
        events = await _completed(storage_url, deadline, "the debate never ended after Slack came back")
        assert time.monotonic() >= back  # it waited Slack out, not talked to nobody
    finally:
        wake(owner.process)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len([e for e in events if isinstance(e, DebateCompleted)]) == 1
    assert len([e for e in events if isinstance(e, Notice) and e.message == TAKEN_OVER]) == 1
    stored = [e for e in events if isinstance(e, TurnCompleted)]
    await _each_shown_once(api, card, stored, settle=LEASE)  # time for the woken worker to post
    texts = [str(m.get("text", "")) for m in api.thread(CHANNEL, card["ts"])]
    assert not any("▌" in text for text in texts)
    assert not _said(api, card, "failed") and not _said(api, card, "Slack refused")
    # the card shows it ended
    await api.wait_until(lambda: "rostra_card_status" not in buttons(api.top_level(CHANNEL)[0]), within=30)
    assert owner.process.poll() is None  # awake, not crashed


async def test_a_stop_reaching_a_worker_as_it_wakes_after_a_takeover_stops_the_debate(
    api: FakeSlack, workers: list[Worker], storage_url: str
) -> None:
    """The owner frozen (SIGSTOP) until the other worker has taken its debate over; Alice's `stop`
    reaches it as it wakes (sent while it was frozen). Its copy of the debate is no longer the
    debate: the Stop goes to the new owner and the debate ends stopped. (The woken worker stopped its
    own copy, answered "Stopping the debate", and the debate went on to its end.)"""
    await workers[0].event(json.dumps(envelope(mention_event(f"debate {TOPIC}"))))
    card = await running_card(api, CHANNEL)
    owner, _ = await owner_and_other(workers, storage_url, TOPIC)
    freeze(owner.process, storage_url)
    try:
        await _taken_over_from(owner, storage_url)
        stopping = asyncio.ensure_future(owner.event(json.dumps(envelope(mention_event("stop")))))
        await asyncio.sleep(0.5)  # in its socket's queue: handled as it wakes
    finally:
        wake(owner.process)
    await stopping
    said = await told(api, ALICE, 1, within=30)
    assert said.startswith((f"Stopping the debate on *{TOPIC}*", f"Asked the debate on *{TOPIC}* to stop")), (
        said
    )
    deadline = time.monotonic() + 30
    while await status_of(storage_url, TOPIC) == "running":
        assert time.monotonic() < deadline, "the debate went on"
        await asyncio.sleep(0.2)
    assert await status_of(storage_url, TOPIC) == "stopped"
    await api.wait_until(lambda: "rostra_card_status" not in buttons(api.top_level(CHANNEL)[0]), within=30)
    assert card["ts"] == api.top_level(CHANNEL)[0]["ts"]
    await owner.event(json.dumps(envelope(mention_event("debate Should trains be free?", user=BOB))))
    deadline = time.monotonic() + 30  # the channel is free on the woken worker too
    while await status_of(storage_url, "Should trains be free?") != "running":
        assert time.monotonic() < deadline, f"Bob's debate never started: {ephemerals(api, BOB)}"
        await asyncio.sleep(0.2)
    assert len(api.top_level(CHANNEL)) == 2


async def test_a_start_frozen_past_its_claim_does_not_open_a_second_debate_in_the_channel(
    api: FakeSlack, workers: list[Worker], storage_url: str
) -> None:
    """Alice's start is admitted by one worker, which is frozen (SIGSTOP) while Slack posts her
    opening card; past a lease its claim on the channel lapses, and Bob's start through the other
    worker runs there. Woken, the first worker does not start a second debate in the channel: Alice is
    told to try again, and her card says it did not start. (It started it: two debates in one
    channel, each worker having let one through.)"""
    first, second = workers
    opening = api.hold_next("chat.postMessage", when=lambda args: not args.get("thread_ts"))
    await first.event(json.dumps(envelope(mention_event(f"debate {TOPIC}"))))
    await api.wait_until(lambda: opening.held, within=30)  # admitted, its card on the way
    freeze(first.process, storage_url)
    try:
        await asyncio.sleep(LEASE + HEARTBEAT + 1)  # its claim lapses: nothing renews it
        await second.event(json.dumps(envelope(mention_event("debate Should trains be free?", user=BOB))))
        deadline = time.monotonic() + 30
        while await status_of(storage_url, "Should trains be free?") != "running":
            assert time.monotonic() < deadline, f"Bob's debate never started: {ephemerals(api, BOB)}"
            await asyncio.sleep(0.2)
    finally:
        opening.gate.set()
        wake(first.process)
    said = await told(api, ALICE, 1, within=30)
    assert "try again" in said, said
    await asyncio.sleep(2.0)  # time for a second debate to be started, if it would be
    assert await status_of(storage_url, TOPIC) in (None, "failed"), "a second debate runs in the channel"
    cards = api.top_level(CHANNEL)
    assert len(cards) == 2 and sum("rostra_card_status" in buttons(card) for card in cards) == 1
    assert any("try again" in card["text"] for card in cards), [card["text"] for card in cards]


async def _people(storage_url: str) -> list[tuple[str, str | None]]:
    """The (one) debate's people's votes as stored, in order: (person, choice; None: withdrawn)."""
    _, events = await _stored(storage_url)
    return [
        (e.voter.id, e.choice if isinstance(e, VoteCast) else None)
        for e in events
        if isinstance(e, VoteCast | VoteWithdrawn) and e.voter.human
    ]


async def test_a_reaction_reaching_a_worker_as_it_wakes_after_a_takeover_counts_as_the_card_shows_it(
    api: FakeSlack, workers: list[Worker], storage_url: str
) -> None:
    """People vote on the card while the owner is frozen (SIGSTOP) past the takeover; Bob's ✅
    reaches it as it wakes, and his taking it back reaches the new owner. The vote is what the card
    shows: none. (The woken worker's stale card ballot passed on the vote its ✅ made, so the new
    owner's ballot never saw the ✅ and the removal withdrew nothing: Bob's vote stayed.)"""
    await workers[0].event(json.dumps(envelope(mention_event(f"debate {TOPIC} humans=vote"))))
    card = await running_card(api, CHANNEL)
    owner, other = await owner_and_other(workers, storage_url, TOPIC)

    def ballot() -> dict[str, Any] | None:
        return next(
            (m for m in api.thread(CHANNEL, card["ts"]) if str(m.get("text", "")).startswith("Vote: ")), None
        )

    await api.wait_until(lambda: ballot() is not None and len(api.calls_to("reactions.get")) >= 1, within=60)
    vote = ballot()
    assert vote is not None
    reads = len(api.calls_to("reactions.get"))
    freeze(owner.process, storage_url)
    try:
        await _taken_over_from(owner, storage_url)
        # the new owner reads the card as it opens the window again
        await api.wait_until(lambda: len(api.calls_to("reactions.get")) > reads, within=30)
        api.react(CHANNEL, vote["ts"], "white_check_mark", BOB)
        made = reaction_event(True, BOB, "white_check_mark", vote["ts"])
        reacting = asyncio.ensure_future(owner.event(json.dumps(envelope(made))))
        await asyncio.sleep(0.5)  # in its socket's queue: handled as it wakes
    finally:
        wake(owner.process)
    await reacting
    deadline = time.monotonic() + 30
    while (BOB, "keep") not in await _people(storage_url):
        assert time.monotonic() < deadline, f"Bob's ✅ never counted: {await _people(storage_url)}"
        await asyncio.sleep(0.3)
    api.react(CHANNEL, vote["ts"], "white_check_mark", BOB, added=False)
    await other.event(json.dumps(envelope(reaction_event(False, BOB, "white_check_mark", vote["ts"]))))
    deadline = time.monotonic() + 30
    while (people := await _people(storage_url))[-1] != (BOB, None):
        assert time.monotonic() < deadline, f"Bob's vote stayed after he took his ✅ back: {people}"
        await asyncio.sleep(0.3)
    assert people == [(BOB, "keep"), (BOB, None)]
