"""Two Discord worker processes on one database act as one bot (SQLite and Postgres): each is the
real bot and runtime (tests/workers/discord_worker.py) against the loopback REST fake, fed the
interactions Discord's gateway would deliver. A second `/debate start` in a busy channel is refused
by the other worker; `/debate status`, the card's Status button, `/debate transcript` and
`/debate stop` work through the worker that does not run the debate; an interaction delivered to
both workers is answered once; and a worker killed with SIGKILL while the other holds a Stop for its
debate has it taken over and stopped, every turn shown once; one frozen (SIGSTOP) instead, and woken
after the takeover, shows nothing of what it still held; one killed as the database goes away for
30 s has its debate taken over once the database is back, every turn shown once. With Claude
overloaded for 30 s, a Stop through the other worker ends the debate at once, and a worker killed
meanwhile has its debate waited out and finished by the other. Debates in one channel's threads,
started on either worker, share its persona webhooks as one bot's would (the seats counted in the
store). A start meeting Discord's failing REST (a minute as its thread opens, 30 s on its answers,
threads made with their answers lost) starts once Discord is back, in one thread, its card shown once."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from adapters.discord.delivery.webhooks import SEAT_KEY, SEAT_SHARE
from core.events import DebateCompleted, Event, Notice, TurnCompleted, VoteCast, VotingClosed
from core.recovery import TAKEN_OVER
from core.settings import StorageSettings
from core.storage import open_store
from testkit.anthropic_api import FakeAnthropic
from testkit.anthropic_api import Request as AnthropicRequest
from testkit.discord_interactions import APP_ID, EVERYTHING, GUILD_ID, Reply
from testkit.discord_rest import FakeDiscordREST
from testkit.discord_world import FAST
from testkit.postgres import running_server
from tests.bot.freezing import freeze, wake
from tests.bot.model_outage import BACK, PAUSED, on_claude, overload
from tests.database_away import database_away
from tests.helpers import CONFIG_PATH, REPO, write_script

pytestmark = pytest.mark.slow

LEASE, HEARTBEAT = 6.0, 1.0
STREAMING = "▌"  # the end of a turn still being written
ROOM = 10.0  # seconds a loaded machine may add to a takeover
TOPIC = "Should cities ban cars?"
ALICE = {"id": "1001", "username": "alice", "discriminator": "0", "avatar": None, "global_name": "Alice"}
BOB = {"id": "1002", "username": "bob", "discriminator": "0", "avatar": None, "global_name": "Bob"}
PACED: dict[str, Any] = {
    "proposition": [{"say": f"Proposition, turn {i}: streets for people.", "delay": 1.5} for i in range(9)],
    "opposition": [{"say": f"Opposition, turn {i}: people need to work.", "delay": 1.5} for i in range(9)],
    "observer": [{"vote": "keep", "reason": "Clear and on topic."}],
    "moderator": ["Both sides made their case; the question is how fast, and for whom."],
}


class Worker:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.owner = ""

    async def line(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        text = await asyncio.wait_for(asyncio.to_thread(self.process.stdout.readline), timeout=120)
        assert text, "the worker exited"
        answer: dict[str, Any] = json.loads(text)
        return answer

    async def feed(self, payload: dict[str, Any]) -> int:
        """Deliver an interaction, as the gateway would; its id."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(payload) + "\n")
        self.process.stdin.flush()
        assert await self.line() == {"fed": payload["id"]}
        return int(payload["id"])

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)


@pytest.fixture
async def api() -> AsyncIterator[FakeDiscordREST]:
    fake = FakeDiscordREST(FAST)
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def channel(api: FakeDiscordREST) -> int:
    channel_id = api.add_channel(guild_id=GUILD_ID)
    api.channels[channel_id]["name"] = "debates"
    return channel_id


def _guild(api: FakeDiscordREST, channel_id: int) -> dict[str, Any]:
    """GUILD_CREATE's guild: the server, its debate channel and that channel's threads, the bot as a
    member."""
    threads = [cid for cid, c in api.channels.items() if c["parent_id"] == channel_id]
    me = {"id": str(APP_ID), "username": "Rostra", "discriminator": "0000", "avatar": None, "bot": True}
    role = {"id": str(GUILD_ID), "name": "@everyone", "permissions": EVERYTHING, "position": 0}
    return {
        "id": str(GUILD_ID),
        "name": "Agora",
        "owner_id": "1",
        "roles": [{**role, "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}],
        "channels": [api.interactions.channel_json(channel_id)],
        "threads": [api.interactions.channel_json(thread) for thread in threads],
        "members": [{"user": me, "roles": [], "joined_at": "2026-01-01T00:00:00+00:00", "flags": 0}],
        "emojis": [],
        "stickers": [],
        "features": [],
        "member_count": 2,
        "unavailable": False,
    }


@pytest.fixture
async def workers(
    tmp_path: Path, api: FakeDiscordREST, channel: int, storage_url: str
) -> AsyncIterator[Callable[..., Awaitable[Worker]]]:
    """Start a worker; keyword arguments set (or, given None, unset) its environment's variables."""
    script = write_script(tmp_path, PACED)
    started: list[Worker] = []

    async def start(**changed: str | None) -> Worker:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "DISCORD_", "ANTHROPIC_"))}
        env.update(
            ROSTRA_CONFIG=str(CONFIG_PATH),
            ROSTRA_STORAGE__URL=storage_url,
            ROSTRA_STORAGE__LEASE_SECONDS=str(LEASE),
            ROSTRA_STORAGE__HEARTBEAT_SECONDS=str(HEARTBEAT),
            # requests left in the store come slowly by the vote loop: only a prompt takeover makes
            # a Stop left for a dead worker prompt
            ROSTRA_STORAGE__POLL_SECONDS="3",
            ROSTRA_MODEL__DEFAULT="scripted",
            ROSTRA_MODEL__SCRIPT=str(script),
            ROSTRA_MODEL__LATENCY="0",
            ROSTRA_LIMITS__USER_COOLDOWN="0",
            ROSTRA_LIMITS__MAX_DEBATES_PER_SCOPE=str(SEAT_SHARE + 1),  # a busy channel's threads
            ROSTRA_DISCORD__EDIT_INTERVAL="0",
            ROSTRA_INSTANCE=f"machine-{len(started)}",  # as on two machines: only leases tell who lives
            ROSTRA_TEST_DISCORD_API=api.base,
            ROSTRA_TEST_GUILD=json.dumps(_guild(api, channel)),
        )
        for name, value in changed.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        process = _spawn(env, tmp_path / "stderr.log")
        worker = Worker(process)
        started.append(worker)
        worker.owner = (await worker.line())["ready"]
        return worker

    yield start
    for worker in started:
        if worker.process.poll() is None:
            assert worker.process.stdin is not None
            worker.process.stdin.close()
            try:
                worker.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
        for pipe in (worker.process.stdin, worker.process.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


def _spawn(env: dict[str, str], log: Path) -> subprocess.Popen[str]:
    with log.open("a", encoding="utf-8") as errors:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.workers.discord_worker"],
            cwd=REPO,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )


async def _query(storage_url: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    if storage_url.startswith("sqlite"):
        with sqlite3.connect(storage_url.removeprefix("sqlite:///")) as db:
            return list(db.execute(sql.replace("$1", "?"), args).fetchall())
    conn = await asyncpg.connect(storage_url)
    try:
        return [tuple(r) for r in await conn.fetch(sql, *args)]
    finally:
        await conn.close()


async def _stored(storage_url: str) -> list[Event]:
    """The (one) debate's stored events, read through a store of the test's own."""
    store = await open_store(storage_url, StorageSettings(url=storage_url))
    try:
        (record,) = await store.list_debates()
        return await store.events(record.id)
    finally:
        await store.close()


async def _owner(storage_url: str, workers: list[Worker]) -> tuple[Worker, Worker]:
    """The worker running the (one) debate on TOPIC, and the other."""
    for _ in range(300):
        rows = await _query(storage_url, "SELECT owner FROM debates WHERE topic = $1", TOPIC)
        if rows and rows[0][0]:
            break
        await asyncio.sleep(0.1)
    (owner,) = [w for w in workers if w.owner == rows[0][0]]
    (other,) = [w for w in workers if w is not owner]
    return owner, other


async def _answer(api: FakeDiscordREST, interaction_id: int, within: float = 30) -> Reply:
    """The person's answer to an interaction, once it is complete (not "thinking…")."""
    replies = api.interactions.replies
    await api.wait_until(lambda: any(not r.loading for r in replies(interaction_id)), within=within)
    return next(r for r in replies(interaction_id) if not r.loading)


async def _start(api: FakeDiscordREST, worker: Worker, channel: int, user: dict[str, Any]) -> Reply:
    payload = api.interactions.payload_for_slash(
        channel_id=channel, user=user, sub="start", options={"topic": TOPIC, "exchanges": 1}
    )
    return await _answer(api, await worker.feed(payload))


async def _ask(api: FakeDiscordREST, worker: Worker, channel: int, user: dict[str, Any], sub: str) -> Reply:
    payload = api.interactions.payload_for_slash(channel_id=channel, user=user, sub=sub)
    return await _answer(api, await worker.feed(payload))


async def _status_of(storage_url: str) -> str:
    rows = await _query(storage_url, "SELECT status FROM debates WHERE topic = $1", TOPIC)
    return str(rows[0][0])


async def _until_stopped(storage_url: str, within: float, why: str = "the stop was never applied") -> None:
    """Wait until the (one) debate's status is `stopped`."""
    deadline = time.monotonic() + within
    while await _status_of(storage_url) != "stopped":
        assert time.monotonic() < deadline, why
        await asyncio.sleep(0.2)


def _asked_to_stop(reply: Reply) -> None:
    """The person was told the debate stops (now, or in a moment)."""
    assert reply.content.startswith(("Stopping the debate", "Asked the debate to stop")), reply.content


async def test_a_busy_channel_and_the_controls_answer_the_same_from_either_worker(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    a, b = await workers(), await workers()
    card = await _start(api, a, channel, ALICE)
    assert not card.ephemeral and "rostra:stop:" in " ".join(card.custom_ids())
    owner, other = await _owner(storage_url, [a, b])
    assert owner is a

    refused = await _start(api, other, channel, BOB)  # a second start in the busy channel
    assert refused.ephemeral and "already" in refused.content.lower(), refused.content
    thread = int(
        str((await _query(storage_url, "SELECT channel FROM debates WHERE topic = $1", TOPIC))[0][0])
    )
    assert f"<#{thread}>" in refused.content, refused.content  # the debate's thread, linked
    by_owner = await _start(api, owner, channel, BOB)
    assert by_owner.ephemeral and by_owner.content == refused.content  # the same words from either

    status = await _ask(api, other, channel, BOB, "status")
    assert status.ephemeral and TOPIC in status.content, status.content
    clicked = api.interactions.payload_for_click(
        user=BOB,
        message=api.messages[card.id],
        custom_id=next(c for c in card.custom_ids() if c.startswith("rostra:status:")),
    )
    by_button = await _answer(api, await other.feed(clicked))
    assert by_button.ephemeral and TOPIC in by_button.content, by_button.content

    transcript = await _ask(api, other, channel, BOB, "transcript")
    assert transcript.ephemeral and TOPIC in transcript.content, transcript.content

    _asked_to_stop(await _ask(api, other, channel, ALICE, "stop"))
    await _until_stopped(storage_url, 30)
    after = await _ask(api, owner, channel, BOB, "status")
    assert after.content.startswith("No debate is running here"), after.content


async def test_an_interaction_delivered_to_both_workers_is_answered_once(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    a, b = await workers(), await workers()
    payload = api.interactions.payload_for_slash(
        channel_id=channel, user=ALICE, sub="start", options={"topic": TOPIC, "exchanges": 1}
    )
    interaction_id = int(payload["id"])
    await asyncio.gather(a.feed(payload), b.feed(payload))
    card = await _answer(api, interaction_id)
    await asyncio.sleep(1.5)  # time for a second answer or a second debate, if there were one
    assert [r.id for r in api.interactions.replies(interaction_id)] == [card.id]
    assert len(await _query(storage_url, "SELECT id FROM debates")) == 1
    threads = [c for c in api.channels.values() if c["parent_id"] == channel]
    assert len(threads) == 1


async def _running(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> tuple[Worker, Worker, int]:
    """Two workers, Alice's debate started on the first: its owner, the other, and its thread."""
    a, b = await workers(), await workers()
    await _start(api, a, channel, ALICE)
    owner, other = await _owner(storage_url, [a, b])
    (thread,) = [cid for cid, c in api.channels.items() if c["parent_id"] == channel]
    return owner, other, thread


async def _each_turn_shown_once(
    api: FakeDiscordREST, shown: Callable[[], list[str]], spoken: list[TurnCompleted], settle: float = 1.0
) -> None:
    """The thread shows each stored turn once, whole, in order, after `settle` seconds more (time for
    a doubled message, or a woken worker's, to show if there were one)."""
    await api.wait_until(lambda: len(shown()) >= len(spoken), within=30)
    await asyncio.sleep(settle)
    texts = shown()
    assert len(texts) == len(spoken), texts
    for text, turn in zip(texts, spoken, strict=True):
        assert turn.text.strip(" …") in text and STREAMING not in text, (text, turn.text)


def _turns_shown(api: FakeDiscordREST, thread: int) -> Callable[[], list[str]]:
    """What the thread shows of the turns, oldest first (a turn still thinking shows "…")."""
    return lambda: [
        m["content"] for m in api.in_channel(thread) if "turn " in m["content"] or "…" in m["content"]
    ]


@pytest.mark.parametrize("moment", ["between turns", "while a turn is posted"])
async def test_a_worker_killed_while_the_other_holds_a_stop_for_its_debate(
    api: FakeDiscordREST,
    workers: Callable[[], Awaitable[Worker]],
    channel: int,
    storage_url: str,
    moment: str,
) -> None:
    owner, other, thread = await _running(api, workers, channel, storage_url)
    turns_shown = _turns_shown(api, thread)

    if moment == "between turns":  # two shown in full, the third still thinking (a second and a half)
        await api.wait_until(lambda: len([t for t in turns_shown() if STREAMING not in t]) >= 2, within=60)
    else:  # the second turn's first words just posted: its message id perhaps not yet recorded
        await api.wait_until(lambda: len(turns_shown()) >= 2, within=60)
    owner.kill()
    killed_at = time.time()

    status = await _ask(api, other, channel, BOB, "status")  # from the store, while the owner lies dead
    assert TOPIC in status.content, status.content
    stopped = await _ask(api, other, channel, ALICE, "stop")
    assert stopped.content.startswith(("Stopping the debate", "Asked the debate to stop")), stopped.content

    deadline = time.monotonic() + 90
    while await _status_of(storage_url) != "stopped":
        assert time.monotonic() < deadline, "the debate was never taken over and stopped"
        await asyncio.sleep(0.2)
    events = await _stored(storage_url)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    ends = [e for e in events if isinstance(e, DebateCompleted)]
    assert len(ends) == 1 and ends[0].reason == "stopped"
    (taken,) = [i for i, e in enumerate(events) if isinstance(e, Notice) and e.message == TAKEN_OVER]
    assert events[taken].at.timestamp() - killed_at < LEASE + HEARTBEAT + ROOM
    after = [e for e in events[taken:] if isinstance(e, TurnCompleted)]
    assert [e.interrupted for e in after] in ([], [True])  # at most the turn in progress, cut short
    await _each_turn_shown_once(api, turns_shown, [e for e in events if isinstance(e, TurnCompleted)])


def _person(n: int) -> dict[str, Any]:
    return {
        "id": str(2000 + n),
        "username": f"p{n}",
        "discriminator": "0",
        "avatar": None,
        "global_name": None,
    }


async def test_the_workers_share_a_channels_persona_webhooks_through_the_store(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """Five debates in the threads of one channel, four on one worker, the fifth on the other: the
    fifth speaks through the channel's second webhook, counted from the store (each worker alone
    would have put it on the first, with the other four)."""
    threads = [api.add_channel(parent_id=channel, guild_id=GUILD_ID) for _ in range(SEAT_SHARE + 1)]
    a, b = await workers(), await workers()
    for n, thread in enumerate(threads[:SEAT_SHARE]):
        card = await _start(api, a, thread, _person(n))
        assert not card.ephemeral, card.content
    seated = "SELECT COUNT(*) FROM bindings WHERE key = $1"
    for _ in range(300):  # each debate's seat is stored as its opening is shown
        if (await _query(storage_url, seated, SEAT_KEY))[0][0] == SEAT_SHARE:
            break
        await asyncio.sleep(0.1)
    card = await _start(api, b, threads[-1], _person(SEAT_SHARE))
    assert not card.ephemeral, card.content

    def spoke_through(thread: int) -> set[str]:
        names = {h["id"]: h["name"] for h in api.webhooks.values()}  # persona webhooks, not replies
        return {names[m["webhook_id"]] for m in api.in_channel(thread) if m.get("webhook_id") in names}

    await api.wait_until(lambda: all(spoke_through(t) for t in threads), within=60)
    assert [spoke_through(t) for t in threads] == [{"Rostra"}] * SEAT_SHARE + [{"Rostra 2"}]


@pytest.mark.parametrize("moment", ["while a turn is posted", "owing Discord a turn"])
async def test_a_worker_paused_while_the_other_stops_its_debate_shows_nothing_when_it_wakes(
    api: FakeDiscordREST,
    workers: Callable[[], Awaitable[Worker]],
    channel: int,
    storage_url: str,
    moment: str,
) -> None:
    """The owner frozen (SIGSTOP) past its lease, its debate taken over and stopped through the other
    worker, then woken (SIGCONT) with its deliveries still queued: the thread shows each stored turn
    once and the debate's end once, and nothing the woken worker had in hand."""
    owner, other, thread = await _running(api, workers, channel, storage_url)
    turns_shown = _turns_shown(api, thread)

    await api.wait_until(lambda: len(turns_shown()) >= 2, within=60)
    if moment == "owing Discord a turn":  # its webhook fails a while: the owner holds turns unshown
        for method in ("POST", "PATCH"):
            api.fail(method, r"/webhooks/.*", for_seconds=4.0)
        await asyncio.sleep(2.5)
    freeze(owner.process, storage_url)
    try:
        _asked_to_stop(await _ask(api, other, channel, ALICE, "stop"))
        await _until_stopped(storage_url, 90, "the debate was never taken over and stopped")
    finally:
        wake(owner.process)
    spoken = [e for e in await _stored(storage_url) if isinstance(e, TurnCompleted)]
    await _each_turn_shown_once(api, turns_shown, spoken, settle=LEASE)  # time for the woken worker to post
    ends = [m for m in api.in_channel(thread) if "stopped" in m["content"].lower()]
    assert len(ends) == 1, [m["content"] for m in ends]
    assert owner.process.poll() is None  # awake, not crashed
    status = await _ask(api, owner, channel, BOB, "status")
    assert status.content.startswith("No debate is running here"), status.content


def _click(api: FakeDiscordREST, channel: int, user: dict[str, Any], action: str) -> dict[str, Any]:
    """A click on the opening card's `action` button (stop, status, transcript)."""
    for card in api.in_channel(channel):
        ids = [c["custom_id"] for row in card.get("components", []) for c in row.get("components", [])]
        for custom_id in ids:
            if custom_id.startswith(f"rostra:{action}:"):
                return api.interactions.payload_for_click(user=user, message=card, custom_id=custom_id)
    raise AssertionError(f"no {action} button in the channel")


async def test_the_database_away_30_s_a_stop_through_the_other_worker_is_kept_until_it_is_back(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """Another process locks the database for 30 s while a debate runs. Through the worker that does
    not run the debate, Status answers (the debate's status, or that the database is not answering),
    and the starter's Stop is kept: she is told it waits for the database, then, once it is back,
    that the debate was asked to stop; it ends stopped, each stored turn shown once. A second start
    there is refused in words. Each is answered (or deferred) within Discord's 3 s. (The Stop failed:
    the store's error went unanswered, and the debate went on; the start answered the store's words
    after its 5 s busy wait, too late for Discord.)"""
    _, other, thread = await _running(api, workers, channel, storage_url)
    turns_shown = _turns_shown(api, thread)
    await api.wait_until(lambda: len(turns_shown()) >= 1, within=60)
    held = asyncio.Event()
    away = asyncio.ensure_future(database_away(storage_url, 30.0, held))
    await asyncio.wait_for(held.wait(), 10)
    back = time.monotonic() + 30.0

    asked = await other.feed(api.interactions.payload_for_slash(channel_id=channel, user=ALICE, sub="stop"))
    typed = await other.feed(api.interactions.payload_for_slash(channel_id=channel, user=BOB, sub="status"))
    clicked = await other.feed(_click(api, channel, BOB, "status"))
    start = api.interactions.payload_for_slash(
        channel_id=channel, user=BOB, sub="start", options={"topic": "Should trains be free?"}
    )
    started = await other.feed(start)

    def answers() -> list[str]:
        return [r.content for r in api.interactions.replies(asked) if not r.loading]

    await api.wait_until(lambda: len(answers()) >= 1, within=30)
    assert answers()[0].startswith("The database isn't answering right now. Your Stop is kept"), answers()
    assert time.monotonic() < back  # told while the database was away
    await api.wait_until(lambda: len(answers()) >= 2, within=30 + 60)
    assert answers()[1].startswith(("Stopping the debate", "Asked the debate to stop")), answers()
    assert time.monotonic() >= back - 1  # answered once the database was back
    for status in (typed, clicked):  # the command, and the card's button: answered either way
        said = (await _answer(api, status, within=60)).content
        assert TOPIC in said or said.startswith("The database isn't answering right now"), said
    await api.wait_until(lambda: any(not r.loading for r in api.interactions.replies(started)), within=60)
    refused = " / ".join(r.content for r in api.interactions.replies(started))
    assert "already running" in refused or "The database isn't answering right now" in refused, refused
    for interaction in (asked, typed, clicked, started):  # each within Discord's 3 s (a defer, at least)
        took = api.interactions.asked[interaction].answered_within()
        assert took is not None and took < 3.0, took
    await away
    deadline = time.monotonic() + 60
    while await _status_of(storage_url) != "stopped":
        assert time.monotonic() < deadline, "the stop was never applied"
        await asyncio.sleep(0.2)
    spoken = [e for e in await _stored(storage_url) if isinstance(e, TurnCompleted)]
    await _each_turn_shown_once(api, turns_shown, spoken)


async def test_a_worker_killed_while_the_database_is_away_30_s_is_taken_over_once_it_is_back(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """The owner dies and the database is away for 30 s from that moment: the other worker cannot
    take the debate over meanwhile, does so once the database answers, and the thread then shows
    every stored turn once, whole, and the debate stops when asked."""
    owner, other, thread = await _running(api, workers, channel, storage_url)
    turns_shown = _turns_shown(api, thread)
    await api.wait_until(lambda: len(turns_shown()) >= 2, within=60)
    owner.kill()
    held = asyncio.Event()
    away = asyncio.ensure_future(database_away(storage_url, 30.0, held))
    await asyncio.wait_for(held.wait(), 10)
    await away
    back_at = time.time()
    deadline = time.monotonic() + LEASE + HEARTBEAT + ROOM + 30
    store = await open_store(storage_url, StorageSettings(url=storage_url))
    try:
        (record,) = await store.list_debates()
        while not any(
            isinstance(e, Notice) and e.message == TAKEN_OVER for e in await store.events(record.id)
        ):
            assert time.monotonic() < deadline, "the debate was never taken over after the database came back"
            await asyncio.sleep(0.2)
        taken = next(
            e for e in await store.events(record.id) if isinstance(e, Notice) and e.message == TAKEN_OVER
        )
        assert taken.at.timestamp() - back_at < LEASE + HEARTBEAT + ROOM
        stopped = await _ask(api, other, channel, ALICE, "stop")
        assert stopped.content.startswith(("Stopping the debate", "Asked the debate to stop")), (
            stopped.content
        )
        while await _status_of(storage_url) != "stopped":
            assert time.monotonic() < deadline + 30, "the stop was never applied"
            await asyncio.sleep(0.2)
        events = await store.events(record.id)
    finally:
        await store.close()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len([e for e in events if isinstance(e, DebateCompleted)]) == 1
    await _each_turn_shown_once(api, turns_shown, [e for e in events if isinstance(e, TurnCompleted)])


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
async def test_the_postgres_server_down_30_s_the_debate_goes_on_once_it_is_back(
    api: FakeDiscordREST, workers: Callable[..., Awaitable[Worker]], channel: int
) -> None:
    """The database server itself is shut down for 30 s (an operator's restart: every connection
    ended, new ones refused) while a debate runs on two workers. Status through the other worker says
    the database is not answering; once the server is back the debate goes on from where it was (it
    is not ended: the store's outage limit is two minutes), a second start is refused because it runs,
    and after a Stop the thread shows every stored turn once, whole, in order."""
    with running_server() as server:
        url = await asyncio.to_thread(server.new_database)
        a, b = await workers(ROSTRA_STORAGE__URL=url), await workers(ROSTRA_STORAGE__URL=url)
        await _start(api, a, channel, ALICE)
        owner, other = await _owner(url, [a, b])
        (thread,) = [cid for cid, c in api.channels.items() if c["parent_id"] == channel]
        turns_shown = _turns_shown(api, thread)
        await api.wait_until(lambda: len([t for t in turns_shown() if STREAMING not in t]) >= 2, within=60)
        await asyncio.to_thread(server.stop)
        try:
            status = await _ask(api, other, channel, BOB, "status")
            assert status.content.startswith("The database isn't answering right now"), status.content
            await asyncio.sleep(30)
            shown_meanwhile = len([t for t in turns_shown() if STREAMING not in t])
        finally:
            await asyncio.to_thread(server.start)
        await api.wait_until(
            lambda: len([t for t in turns_shown() if STREAMING not in t]) >= shown_meanwhile + 2,
            within=LEASE + HEARTBEAT + ROOM + 30,
        )
        assert await _status_of(url) == "running"
        refused = await _start(api, other, channel, BOB)
        assert refused.ephemeral and "already" in refused.content.lower(), refused.content
        _asked_to_stop(await _ask(api, other, channel, ALICE, "stop"))
        await _until_stopped(url, 60)
        events = await _stored(url)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert len([e for e in events if isinstance(e, DebateCompleted)]) == 1
        await _each_turn_shown_once(api, turns_shown, [e for e in events if isinstance(e, TurnCompleted)])
        assert owner.process.poll() is None and other.process.poll() is None  # neither crashed


async def test_discord_down_30_s_while_the_owner_is_frozen_the_other_shows_the_debate_once_it_is_back(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """Discord answers 502 to every request for 30 s from the first turn; meanwhile the debate's
    worker is frozen (SIGSTOP) until the debate has ended elsewhere. The other worker takes it over
    (once Discord answers: it must find the thread) and plays it to its end: the thread then shows
    each stored turn once and whole, the closing summary among them; the woken owner shows nothing
    more (it used to post the turn discord.py was still retrying for it when it froze: a half-written
    turn under the finished debate)."""
    owner, _, thread = await _running(api, workers, channel, storage_url)
    turns_shown = _turns_shown(api, thread)
    await api.wait_until(lambda: len([t for t in turns_shown() if STREAMING not in t]) >= 1, within=60)
    back = time.monotonic() + 30.0
    for method in ("GET", "POST", "PATCH", "PUT", "DELETE"):
        api.fail(method, r"/.*", for_seconds=30.0)
    await asyncio.sleep(4.0)  # the owner meets the outage and holds what it could not show
    freeze(owner.process, storage_url)
    try:
        deadline = back + LEASE + HEARTBEAT + ROOM + 90
        while await _status_of(storage_url) == "running":
            assert time.monotonic() < deadline, "the debate never ended after Discord came back"
            await asyncio.sleep(0.5)
        assert time.monotonic() >= back  # it waited Discord out, not talked to nobody
    finally:
        wake(owner.process)
    events = await _stored(storage_url)
    assert await _status_of(storage_url) == "completed"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len([e for e in events if isinstance(e, DebateCompleted)]) == 1
    assert len([e for e in events if isinstance(e, Notice) and e.message == TAKEN_OVER]) == 1
    spoken = [e for e in events if isinstance(e, TurnCompleted)]  # the closing summary too
    await api.wait_until(lambda: len(_persona_posts(api, thread)) >= len(spoken), within=30)
    await asyncio.sleep(LEASE)  # the woken worker's time to find its lease gone, and to post if it would
    posts = _persona_posts(api, thread)
    assert len(posts) == len(spoken), posts  # each turn once, in order, as stored
    for text, turn in zip(posts, spoken, strict=True):
        assert turn.text in text and STREAMING not in text
    assert not _notices(api, thread, "failed")
    assert owner.process.poll() is None  # awake, not crashed


async def test_discord_not_answering_for_a_minute_as_a_start_opens_its_thread_it_starts_once_back(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """Discord answers 502 to all but the interaction's own callback for 60 s as `/debate start`
    arrives: discord.py's five tries at the thread (25 s) are spent, the start waits Discord out
    (looking for a thread it may have made before trying again), and once Discord is back the
    debate starts in one thread and the person gets its card (it used to be refused, told that
    Discord did not answer)."""
    worker = await workers()
    back = time.monotonic() + 60.0
    for method in ("GET", "POST", "PATCH", "PUT", "DELETE"):
        api.fail(method, r"(?!/interactions/).*", for_seconds=60.0)
    payload = api.interactions.payload_for_slash(
        channel_id=channel, user=ALICE, sub="start", options={"topic": TOPIC, "exchanges": 1}
    )
    card = await _answer(api, await worker.feed(payload), within=150)
    assert time.monotonic() >= back
    assert card.content.startswith("🎙️ Debate started") and not card.ephemeral, card.content
    [thread] = [cid for cid, c in api.channels.items() if c["parent_id"] == channel]
    assert f"<#{thread}>" in card.content
    assert await _query(storage_url, "SELECT channel FROM debates") == [(str(thread),)]
    over = lambda: any("Debate over" in m["content"] for m in api.in_channel(channel))  # noqa: E731
    await api.wait_until(over, within=90)
    assert _persona_posts(api, thread)  # the debate ran in that thread


@pytest.mark.parametrize("lost_for", [5.0, 30.0])
async def test_threads_discord_made_with_its_answers_lost_leave_one_thread_for_the_debate(
    api: FakeDiscordREST,
    workers: Callable[[], Awaitable[Worker]],
    channel: int,
    storage_url: str,
    lost_for: float,
) -> None:
    """Discord makes the thread each time it is asked, but answers 502 for `lost_for` seconds, so
    discord.py's own tries make one thread each: for 5 s the last try gets an answer, for 30 s every
    try is lost and the start finds the threads by reading the server's active threads. Either way
    the debate runs in one thread, the card links that one, and the threads made by the tries it
    did not keep are deleted (none left empty in the channel)."""
    worker = await workers()
    api.fail("POST", rf"/channels/{channel}/threads", after_store=True, for_seconds=lost_for)
    payload = api.interactions.payload_for_slash(
        channel_id=channel, user=ALICE, sub="start", options={"topic": TOPIC, "exchanges": 1}
    )
    card = await _answer(api, await worker.feed(payload), within=150)
    assert card.content.startswith("🎙️ Debate started") and not card.ephemeral, card.content
    made = [cid for cid, c in api.channels.items() if c["parent_id"] == channel]
    assert len(made) > 1  # discord.py did try more than once
    await api.wait_until(lambda: sum(api.channels[t]["gone"] is None for t in made) == 1, within=30)
    [thread] = [t for t in made if api.channels[t]["gone"] is None]
    assert f"<#{thread}>" in card.content
    assert await _query(storage_url, "SELECT channel FROM debates") == [(str(thread),)]
    over = lambda: any("Debate over" in m["content"] for m in api.in_channel(channel))  # noqa: E731
    await api.wait_until(over, within=90)
    assert _persona_posts(api, thread)


async def test_the_start_card_refused_by_discord_for_30_s_shows_once_it_is_back_and_gets_the_result(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """The thread opens and the debate starts, but Discord answers 502 to the interaction's answers
    for 30 s: the start card waits for Discord and shows once (it used to be lost, with the result
    the channel gets when the debate ends, and the person told Rostra had failed)."""
    worker = await workers()
    back = time.monotonic() + 30.0
    api.fail("POST", rf"/webhooks/{APP_ID}/[^/]+", for_seconds=30.0)
    api.fail("PATCH", rf"/webhooks/{APP_ID}/[^/]+/messages/@original", for_seconds=30.0)
    payload = api.interactions.payload_for_slash(
        channel_id=channel, user=ALICE, sub="start", options={"topic": TOPIC, "exchanges": 1}
    )
    card = await _answer(api, await worker.feed(payload), within=120)
    assert time.monotonic() >= back
    assert card.content.startswith("🎙️ Debate started") and not card.ephemeral
    assert any(i.startswith("rostra:stop:") for i in card.custom_ids())
    over = lambda: any("Debate over" in m["content"] for m in api.in_channel(channel))  # noqa: E731
    await api.wait_until(over, within=60)
    assert await _status_of(storage_url) == "completed"
    shown = [m["content"] for m in api.in_channel(channel)]
    assert sum(t.startswith("🎙️ Debate started") for t in shown) == 1, shown  # one card, not two
    assert sum("Debate over" in t for t in shown) == 1, shown


async def test_a_transcript_asked_for_while_discord_fails_30_s_reaches_the_person_once_it_is_back(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int
) -> None:
    """Bob asks for a debate's transcript as Discord starts answering 502 to the interaction's
    follow-ups and edits for 30 s: once Discord is back the Markdown and the page reach him, as the
    one answer to his ask (it used to give up after discord.py's own tries and tell him Discord had
    stopped answering)."""
    worker = await workers()
    await _start(api, worker, channel, ALICE)
    over = lambda: any("Debate over" in m["content"] for m in api.in_channel(channel))  # noqa: E731
    await api.wait_until(over, within=90)
    back = time.monotonic() + 30.0
    api.fail("POST", rf"/webhooks/{APP_ID}/[^/]+", for_seconds=30.0)
    api.fail("PATCH", rf"/webhooks/{APP_ID}/[^/]+/messages/@original", for_seconds=30.0)
    asked = await worker.feed(
        api.interactions.payload_for_slash(channel_id=channel, user=BOB, sub="transcript")
    )
    reply = await _answer(api, asked, within=120)
    assert time.monotonic() >= back  # it waited Discord out
    assert reply.ephemeral and reply.content.startswith("📜 Transcript of") and TOPIC in reply.content
    assert [name.rsplit(".", 1)[-1] for name in reply.files] == ["md", "html"], reply.files
    assert api.interactions.replies(asked) == [reply]  # one answer: "thinking…" completed


async def test_a_stop_answered_while_discord_fails_30_s_is_said_once_it_is_back_not_as_a_failure(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """The debate's worker is frozen (SIGSTOP) and Alice stops the debate through the other worker as
    Discord starts answering 502 to the interaction's follow-ups for 30 s: her answer follows
    "thinking…" (the stop is left for the frozen owner), the other worker takes the debate over and
    stops it meanwhile, and once Discord is back she is told her stop was taken (she used to be told
    Discord had stopped answering and to try again, her stop long done)."""
    a, b = await workers(), await workers()
    await _start(api, a, channel, ALICE)
    owner, other = await _owner(storage_url, [a, b])
    freeze(owner.process, storage_url)
    try:
        back = time.monotonic() + 30.0
        api.fail("POST", rf"/webhooks/{APP_ID}/[^/]+", for_seconds=30.0)
        stop = api.interactions.payload_for_slash(channel_id=channel, user=ALICE, sub="stop")
        asked = await other.feed(stop)
        await _until_stopped(storage_url, 30, "the debate was never taken over and stopped")
        stopped_at = time.monotonic()
        reply = await _answer(api, asked, within=120)
    finally:
        wake(owner.process)
    assert stopped_at < back <= time.monotonic()  # stopped while Discord failed; said once it was back
    _asked_to_stop(reply)
    assert api.interactions.asked[asked].deferred is not None  # (a follow-up: "thinking…" first)
    assert api.interactions.replies(asked) == [reply]


async def test_a_refusal_waiting_for_discord_leaves_the_channel_to_a_start_through_the_other_worker(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """Discord refuses Alice's thread (403, once) and answers 502 to the interactions' answers for
    30 s, so her refusal waits for Discord. Bob, asking through the other worker meanwhile, gets the
    debate (he used to be told the channel was busy: Alice's refusal was said under her start's
    claim on it). Once Discord is back Alice is told why, privately, and Bob's card shows."""
    a, b = await workers(), await workers()
    api.fail("POST", rf"/channels/{channel}/threads", status=403, code=50013, message="Missing Permissions")
    api.fail("POST", rf"/webhooks/{APP_ID}/[^/]+", for_seconds=30.0)
    api.fail("PATCH", rf"/webhooks/{APP_ID}/[^/]+/messages/@original", for_seconds=30.0)
    back = time.monotonic() + 30.0
    options = {"topic": TOPIC, "exchanges": 1}
    alice = await a.feed(
        api.interactions.payload_for_slash(channel_id=channel, user=ALICE, sub="start", options=options)
    )
    refused = lambda: any(r.path.endswith("/messages/@original") for r in api.requests)  # noqa: E731
    await api.wait_until(refused, within=30)  # her refusal is waiting for Discord
    options = {"topic": "Should trains be free?", "exchanges": 1}
    bob = await b.feed(
        api.interactions.payload_for_slash(channel_id=channel, user=BOB, sub="start", options=options)
    )
    card = await _answer(api, bob, within=120)
    assert card.content.startswith("🎙️ Debate started") and not card.ephemeral, card.content
    assert time.monotonic() >= back  # (his card too waited for Discord)
    [thread] = [cid for cid, c in api.channels.items() if c["parent_id"] == channel]
    assert f"<#{thread}>" in card.content
    told = lambda: any("I couldn't open a thread here" in r.content for r in api.interactions.replies(alice))  # noqa: E731
    await api.wait_until(told, within=60)
    [why] = [r for r in api.interactions.replies(alice) if "I couldn't open a thread here" in r.content]
    assert why.ephemeral
    rows = await _query(storage_url, "SELECT topic, channel FROM debates")
    assert rows == [("Should trains be free?", str(thread))]
    over = lambda: any("Debate over" in m["content"] for m in api.in_channel(channel))  # noqa: E731
    await api.wait_until(over, within=90)
    assert _persona_posts(api, thread)  # Bob's debate ran in its thread


def _persona_posts(api: FakeDiscordREST, thread: int) -> list[str]:
    """What the personas' webhooks show in the thread (their turns and stand-in lines), oldest first."""
    hooks = {h["id"] for h in api.webhooks.values()}
    return [m["content"] for m in api.in_channel(thread) if m.get("webhook_id") in hooks]


def _notices(api: FakeDiscordREST, thread: int, words: str) -> list[str]:
    return [m["content"] for m in api.in_channel(thread) if words in m["content"]]


@pytest.mark.parametrize("then", ["stopped through the other worker", "its worker killed"])
async def test_a_model_out_for_30_s_is_waited_out_whichever_worker_people_reach(
    api: FakeDiscordREST,
    workers: Callable[..., Awaitable[Worker]],
    channel: int,
    storage_url: str,
    claude: FakeAnthropic,
    then: str,
) -> None:
    """Claude overloaded for 30 s from the second turn, two workers: the debate pauses and says so.
    A Stop pressed on the other worker meanwhile ends it at once, and the model is asked nothing
    more; a worker killed meanwhile has its debate taken over, waited out by the other worker, and
    played to its end once the model answers. Either way each stored turn shows once, whole."""
    a, b = await workers(**on_claude(claude)), await workers(**on_claude(claude))
    await _start(api, a, channel, ALICE)
    owner, other = await _owner(storage_url, [a, b])
    (thread,) = [cid for cid, c in api.channels.items() if c["parent_id"] == channel]
    await api.wait_until(lambda: len(_persona_posts(api, thread)) >= 1, within=60)
    until = overload(claude, time.monotonic())
    await api.wait_until(lambda: bool(_notices(api, thread, PAUSED)), within=30)

    if then == "stopped through the other worker":
        asked = time.monotonic()
        stopped = await _ask(api, other, channel, ALICE, "stop")
        assert stopped.content.startswith(("Stopping the debate", "Asked the debate to stop")), (
            stopped.content
        )
        while await _status_of(storage_url) != "stopped":
            assert time.monotonic() - asked < 3 + ROOM, "the stop waited for the model"
            await asyncio.sleep(0.2)
        calls = len(claude.requests)
        await asyncio.sleep(5.0)  # the owner's next try, were it still trying
        assert len(claude.requests) == calls  # nothing more asked of the model
        assert time.monotonic() < until  # all of it inside the outage
    else:
        owner.kill()
        deadline = until + LEASE + HEARTBEAT + ROOM + 60
        while await _status_of(storage_url) == "running":
            assert time.monotonic() < deadline, "the debate never ended after the model came back"
            await asyncio.sleep(0.5)
        assert await _status_of(storage_url) == "completed"
        assert len(_notices(api, thread, BACK)) == 1  # the thread was told the debate went on
        assert len(_notices(api, thread, PAUSED)) == 1  # that it waits: once, not after the takeover too

    events = await _stored(storage_url)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len([e for e in events if isinstance(e, DebateCompleted)]) == 1
    if then == "its worker killed":
        assert [e for e in events if isinstance(e, Notice) and e.message == TAKEN_OVER]
    spoken = [e for e in events if isinstance(e, TurnCompleted)]
    await _each_turn_shown_once(api, lambda: _persona_posts(api, thread), spoken)
    assert not _notices(api, thread, "failed")  # the outage never ended the debate as failed


async def _frozen_through_a_takeover(
    api: FakeDiscordREST,
    worker: Worker,
    thread: int,
    storage_url: str,
    meanwhile: Callable[[], None] = lambda: None,
    *,
    told: bool = True,
) -> float:
    """Freeze the worker (SIGSTOP) until its debate was taken over, do `meanwhile`, then wake it
    (SIGCONT); when it was woken (monotonic). Taken over: the thread says so, or (`told` False: the
    notice waits for the debate's next event, which an outage of the model holds back) the store
    names another owner."""

    async def taken() -> bool:
        if told:
            return any(TAKEN_OVER in m["content"] for m in api.in_channel(thread))
        rows = await _query(storage_url, "SELECT owner FROM debates WHERE topic = $1", TOPIC)
        return rows[0][0] not in ("", worker.owner)

    freeze(worker.process, storage_url)
    try:
        deadline = time.monotonic() + LEASE + HEARTBEAT + ROOM + 10
        while not await taken():
            assert time.monotonic() < deadline, "the debate was never taken over"
            await asyncio.sleep(0.2)
        meanwhile()
    finally:
        woken = time.monotonic()
        wake(worker.process)
    return woken


async def test_a_worker_paused_while_it_waits_out_the_model_asks_it_nothing_when_it_wakes(
    api: FakeDiscordREST,
    workers: Callable[..., Awaitable[Worker]],
    channel: int,
    storage_url: str,
    claude: FakeAnthropic,
) -> None:
    """Claude overloaded; the owner, waiting it out, is frozen (SIGSTOP) until the other worker has
    taken the debate over, then woken: it makes no call to the model (each would be paid for twice,
    the other worker making it too), and the debate is finished by the other, each turn shown once."""
    a = await workers(**{**on_claude(claude), "ANTHROPIC_API_KEY": "sk-test-first"})
    b = await workers(**{**on_claude(claude), "ANTHROPIC_API_KEY": "sk-test-second"})
    await _start(api, a, channel, ALICE)
    owner, _ = await _owner(storage_url, [a, b])
    owners_key = "sk-test-first" if owner is a else "sk-test-second"  # whose calls are whose
    (thread,) = [cid for cid, c in api.channels.items() if c["parent_id"] == channel]
    await api.wait_until(lambda: len(_persona_posts(api, thread)) >= 1, within=60)
    until = overload(claude, time.monotonic())
    await api.wait_until(lambda: bool(_notices(api, thread, PAUSED)), within=30)

    woken = await _frozen_through_a_takeover(api, owner, thread, storage_url, told=False)
    await asyncio.sleep(max(5.0, until - time.monotonic() + 2))  # its waits run out, the model is back

    def owners(request: AnthropicRequest) -> bool:  # its calls are told apart by its key
        return owners_key in request.headers.get("x-api-key", "") + request.headers.get("authorization", "")

    assert [r for r in claude.requests if r.at < woken and owners(r)]
    asked = [r for r in claude.requests if r.at > woken and owners(r)]
    assert not asked, f"the woken worker asked the model {len(asked)} times"
    assert owner.process.poll() is None  # awake, not crashed
    deadline = time.monotonic() + 90
    while await _status_of(storage_url) == "running":
        assert time.monotonic() < deadline, "the debate never ended"
        await asyncio.sleep(0.5)
    assert await _status_of(storage_url) == "completed"
    spoken = [e for e in await _stored(storage_url) if isinstance(e, TurnCompleted)]
    await api.wait_until(lambda: len(_persona_posts(api, thread)) >= len(spoken), within=30)
    assert len(_notices(api, thread, TAKEN_OVER)) == 1  # the thread was told, once
    shown = _persona_posts(api, thread)
    assert len(shown) == len(spoken), shown
    for text, turn in zip(shown, spoken, strict=True):
        assert turn.text in text and STREAMING not in text


async def test_a_vote_clicked_on_a_worker_woken_after_a_takeover_is_counted_by_the_new_owner(
    api: FakeDiscordREST, workers: Callable[..., Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """People vote with buttons; the owner is frozen (SIGSTOP) while the window is open, the other
    worker takes the debate over, and the old owner is woken. A click that reaches the woken worker
    (its debate still open there: it has written nothing since) is answered as a vote and counted
    by the new owner, not lost with the old owner's copy of the debate."""
    window = {"ROSTRA_DISCORD__BALLOT": "buttons", "ROSTRA_ARENA__HUMAN_WINDOW": "45"}
    a, b = await workers(**window), await workers(**window)
    payload = api.interactions.payload_for_slash(
        channel_id=channel,
        user=ALICE,
        sub="start",
        options={"topic": TOPIC, "exchanges": 1, "humans": "vote"},
    )
    await _answer(api, await a.feed(payload))
    owner, _ = await _owner(storage_url, [a, b])
    (thread,) = [cid for cid, c in api.channels.items() if c["parent_id"] == channel]

    def ballot() -> dict[str, Any] | None:
        for message in api.in_channel(thread):
            ids = [c["custom_id"] for row in message.get("components", []) for c in row.get("components", [])]
            if any(i.startswith("rostra:ballot:") and i.endswith(":keep") for i in ids):
                return message
        return None

    await api.wait_until(lambda: ballot() is not None, within=60)
    await _frozen_through_a_takeover(api, owner, thread, storage_url)
    card = ballot()
    assert card is not None
    keep = next(
        c["custom_id"]
        for row in card["components"]
        for c in row["components"]
        if c.get("custom_id", "").endswith(":keep")
    )
    clicked = api.interactions.payload_for_click(user=BOB, message=card, custom_id=keep)
    answer = await _answer(api, await owner.feed(clicked))
    assert answer.content.startswith("You voted"), answer.content

    deadline = time.monotonic() + 120
    events = await _stored(storage_url)
    while not any(isinstance(e, VotingClosed) for e in events):
        assert time.monotonic() < deadline, "the window never closed"
        await asyncio.sleep(0.5)
        events = await _stored(storage_url)
    votes = [e for e in events if isinstance(e, VoteCast) and e.voter.human]
    assert [(v.voter.id, v.choice) for v in votes] == [(BOB["id"], "keep")]
    closed = next(e for e in events if isinstance(e, VotingClosed))
    assert closed.human_tally.get("keep") == 1, closed.human_tally


async def test_a_stop_reaching_a_worker_as_it_wakes_after_a_takeover_stops_the_debate(
    api: FakeDiscordREST, workers: Callable[[], Awaitable[Worker]], channel: int, storage_url: str
) -> None:
    """The owner frozen (SIGSTOP) until the other worker has taken its debate over; Alice's
    `/debate stop` reaches it as it wakes (sent while it was frozen). Its copy of the debate is no
    longer the debate: the Stop goes to the new owner and the debate ends stopped. (The woken worker
    stopped its own copy, answered "Stopping the debate", and the debate went on to its end.)"""
    owner, _, thread = await _running(api, workers, channel, storage_url)
    payload = api.interactions.payload_for_slash(channel_id=channel, user=ALICE, sub="stop")

    def deliver() -> None:  # while it sleeps: handled as it wakes
        assert owner.process.stdin is not None
        owner.process.stdin.write(json.dumps(payload) + "\n")
        owner.process.stdin.flush()

    await _frozen_through_a_takeover(api, owner, thread, storage_url, meanwhile=deliver)
    assert await owner.line() == {"fed": payload["id"]}
    answer = await _answer(api, int(payload["id"]))
    assert answer.content.startswith(("Stopping the debate", "Asked the debate to stop")), answer.content
    deadline = time.monotonic() + 30
    while await _status_of(storage_url) == "running":
        assert time.monotonic() < deadline, "the debate went on"
        await asyncio.sleep(0.2)
    assert await _status_of(storage_url) == "stopped"
    again = await _start(api, owner, channel, BOB)  # the channel is free again, on this worker too
    assert not again.ephemeral and "rostra:stop:" in " ".join(again.custom_ids()), again.content
