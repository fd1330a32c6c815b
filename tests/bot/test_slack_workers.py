"""Two `rostra slack --http` workers behind one URL on one database act as one bot: a mention
delivered to both starts one debate, a second start in the busy channel is refused by the other
worker, and `stop` and the card's Status and Stop buttons work through the worker that does not run
the debate; a transcript asked through both is attached once (real processes, the Web API fake,
SQLite and Postgres)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from core.outlasting import TRY_AGAIN
from testkit.slack_api import TEAM, FakeSlack
from testkit.slack_world import ALICE, BOB, CAROL, CHANNEL, envelope, mention_event
from tests.bot.slack_cluster import (
    LONG_TURNS,
    Worker,
    buttons,
    ephemerals,
    owner_and_other,
    running_card,
    running_workers,
    status_of,
    told,
    worker_env,
)
from tests.database_away import database_away
from tests.helpers import write_script

pytestmark = pytest.mark.slow

OTHER_CHANNEL = "C0SECOND"
DATABASE_AWAY = 30.0  # seconds


@pytest.fixture
def workers(
    request: pytest.FixtureRequest, tmp_path: Path, api: FakeSlack, storage_url: str
) -> Iterator[tuple[Worker, Worker]]:
    marker = request.node.get_closest_marker("worker_env")
    env = worker_env(storage_url, write_script(tmp_path, LONG_TURNS), api, marker.kwargs if marker else {})
    with running_workers([env, env], tmp_path / "stderr.log") as (first, second):
        yield first, second


def _told_that(api: FakeSlack, user: str, said: str) -> bool:
    return any(said in text for text in ephemerals(api, user))


async def _the_other(workers: tuple[Worker, Worker], storage_url: str, topic: str) -> Worker:
    return (await owner_and_other(list(workers), storage_url, topic))[1]


async def test_two_workers_start_once_and_answer_controls_from_either(
    api: FakeSlack, workers: tuple[Worker, Worker], storage_url: str
) -> None:
    first, second = workers
    topic = "Should cities ban cars?"
    body = json.dumps(envelope(mention_event(f"debate {topic}")))
    # the same signed delivery (a retry landing on the other worker, or a replay) reaches both
    await asyncio.gather(first.event(body), second.event(body))
    card = await running_card(api, CHANNEL)
    await asyncio.sleep(1.0)  # time for a second start, if there were one
    assert len(api.top_level(CHANNEL)) == 1
    other = await _the_other(workers, storage_url, topic)

    # a second start in the busy channel, through the worker that does not run the debate
    await other.event(json.dumps(envelope(mention_event("debate Should trains be free?", user=BOB))))
    assert "A debate is already running here" in await told(api, BOB, 1)
    assert len(api.top_level(CHANNEL)) == 1

    # the card's Status button through the other worker: the debate's status, not "ended"
    await other.click(BOB, card, "rostra_card_status")
    status = await told(api, BOB, 2)
    assert f"*{topic}*" in status and "phase" in status

    # `stop` by its starter through the other worker ends it
    await other.event(json.dumps(envelope(mention_event("stop"))))
    said = await told(api, ALICE, 1)
    assert said.startswith((f"Stopping the debate on *{topic}*", f"Asked the debate on *{topic}* to stop"))
    await api.wait_until(lambda: "rostra_card_status" not in buttons(api.top_level(CHANNEL)[0]), within=30)

    # a debate in another channel: its card's Stop button through the worker that does not run it
    topic2 = "Should trains be free?"
    await first.event(json.dumps(envelope(mention_event(f"debate {topic2}", channel=OTHER_CHANNEL))))
    card2 = await running_card(api, OTHER_CHANNEL)
    other2 = await _the_other(workers, storage_url, topic2)
    await other2.click(ALICE, card2, "rostra_card_stop")
    said = await told(api, ALICE, 2)
    assert said.startswith((f"Stopping the debate on *{topic2}*", f"Asked the debate on *{topic2}* to stop"))
    await api.wait_until(
        lambda: "rostra_card_status" not in buttons(api.top_level(OTHER_CHANNEL)[0]), within=30
    )
    # and now nothing runs there, whichever worker is asked
    await first.event(json.dumps(envelope(mention_event("status", channel=OTHER_CHANNEL))))
    assert (await told(api, ALICE, 3)).startswith("No debate is running in this channel")


async def _start_form_answer(api: FakeSlack, worker: Worker, user: str, topic: str) -> dict[str, Any]:
    """`/debate` alone through `worker` (it opens the Start form), the form sent back through it with
    `topic`: what the worker answered the submission with (inline errors, or nothing)."""
    opened = len(api.views.opened)
    fields = {"token": "legacy", "team_id": TEAM, "channel_id": CHANNEL, "user_id": user, "text": ""}
    fields |= {"command": "/debate", "trigger_id": api.trigger(user), "api_app_id": "A0001"}
    assert await worker.post(urlencode(fields), "application/x-www-form-urlencoded") == 200
    await api.wait_until(lambda: len(api.views.opened) > opened, within=20)
    payload = {"type": "view_submission", "team": {"id": TEAM}, "user": {"id": user, "team_id": TEAM}}
    payload |= {"api_app_id": "A0001", "token": "legacy", "trigger_id": api.trigger(user)}
    payload["view"] = api.submission_state(api.last_view().id, {"topic": topic})
    body = urlencode({"payload": json.dumps(payload)})
    status, answer = await worker.answer(body, "application/x-www-form-urlencoded")
    assert status == 200
    return dict(json.loads(answer)) if answer.strip() else {}


async def test_the_start_form_says_a_channel_is_busy_whichever_worker_reads_it(
    api: FakeSlack, workers: tuple[Worker, Worker], storage_url: str
) -> None:
    topic = "Should cities ban cars?"
    await workers[0].event(json.dumps(envelope(mention_event(f"debate {topic}"))))
    await running_card(api, CHANNEL)
    owner, other = await owner_and_other(list(workers), storage_url, topic)

    answers = [await _start_form_answer(api, w, BOB, "Should trains be free?") for w in (other, owner)]
    for answer in answers:  # said in the form, before it closes
        assert answer.get("response_action") == "errors", answer
        [said] = answer["errors"].values()
        assert "already running in that channel" in said and topic in said, said
    assert answers[0] == answers[1]  # the same words from the worker that does not run the debate
    await asyncio.sleep(1.0)  # time for a start, if there were one
    assert len(api.top_level(CHANNEL)) == 1 and not ephemerals(api, BOB)


@pytest.mark.worker_env(ROSTRA_LIMITS__MAX_DEBATES_PER_SCOPE="3")
async def test_twenty_simultaneous_starts_over_two_workers_never_pass_the_cap(
    api: FakeSlack, workers: tuple[Worker, Worker]
) -> None:
    channels = [f"C0ROOM{i:02d}" for i in range(20)]
    bodies = [
        json.dumps(envelope(mention_event(f"debate Motion {i}?", user=f"U{i:04d}", channel=channel)))
        for i, channel in enumerate(channels)
    ]
    await asyncio.gather(*(workers[i % 2].event(body) for i, body in enumerate(bodies)))
    await api.wait_until(lambda: len(api.ephemerals) >= 17, within=30)  # every refusal said
    await asyncio.sleep(1.0)  # time for a fourth debate, if there were one
    assert sum(len(api.top_level(c)) for c in channels) == 3
    refusals = [e["text"] for e in api.ephemerals]
    assert len(refusals) == 17
    assert all("(the limit is 3)" in text for text in refusals)


async def test_a_transcript_asked_through_either_worker_is_attached_once(
    api: FakeSlack, workers: tuple[Worker, Worker], storage_url: str
) -> None:
    """Alice asks for the debate's transcript through one worker, then Bob through the other within
    the ten minutes: one Markdown file and its page are attached, and Bob is pointed to them. (Each
    worker kept its own window: Bob's ask attached a second pair.)"""
    first, second = workers
    topic = "Should cities ban cars?"
    await first.event(json.dumps(envelope(mention_event(f"debate {topic}"))))
    await running_card(api, CHANNEL)
    await _the_other(workers, storage_url, topic)  # stored (its card is posted just before)
    for worker, user, said in (
        (first, ALICE, "is attached in the debate's thread"),
        (second, BOB, "was attached in"),  # pointed to the file the other worker attached
        (first, CAROL, "was attached in"),
    ):
        await worker.event(json.dumps(envelope(mention_event("transcript", user=user))))
        await api.wait_until(partial(_told_that, api, user, said), within=30)
    transcripts = [f["filename"] for f in api.files.values() if f["filename"].endswith((".md", ".html"))]
    assert len(transcripts) == 2, transcripts


async def test_the_database_away_30_s_a_stop_through_the_other_worker_is_kept_until_it_is_back(
    api: FakeSlack, workers: tuple[Worker, Worker], storage_url: str
) -> None:
    """Another process locks the database for 30 s while a debate runs. Asked through the worker
    that does not run the debate meanwhile, Status answers, typed or clicked (the debate's status, or
    that the database is not answering), and the starter's Stop is kept: she is told at once that it
    waits for the database, and once the database is back that the debate was asked to stop; it ends
    stopped. A second start there is refused in words. (The Stop was answered "🚫 the database is
    unavailable: database is locked" after 20 s, and the debate went on.)"""
    first, _ = workers
    topic = "Should cities ban cars?"
    await first.event(json.dumps(envelope(mention_event(f"debate {topic}"))))
    card = await running_card(api, CHANNEL)
    other = await _the_other(workers, storage_url, topic)
    held = asyncio.Event()
    away = asyncio.ensure_future(database_away(storage_url, DATABASE_AWAY, held))
    await asyncio.wait_for(held.wait(), 10)
    back = time.monotonic() + DATABASE_AWAY

    await other.event(json.dumps(envelope(mention_event("stop"))))
    await other.event(json.dumps(envelope(mention_event("status", user=BOB))))
    await other.click(BOB, card, "rostra_card_status")
    await other.event(json.dumps(envelope(mention_event("debate Should trains be free?", user=CAROL))))
    waits = await told(api, ALICE, 1, within=30)
    assert waits.startswith("The database isn't answering right now. Your Stop is kept"), waits
    assert time.monotonic() < back  # told while the database was away
    said = await told(api, ALICE, 2, within=DATABASE_AWAY + 60)
    asked = (f"Stopping the debate on *{topic}*", f"Asked the debate on *{topic}* to stop")
    assert said.startswith(asked), said
    assert time.monotonic() >= back - 1  # answered once the database was back
    await told(api, BOB, 2, within=60)
    for status in ephemerals(api, BOB):  # the command, and the card's button: answered either way
        assert f"*{topic}*" in status or status.startswith("The database isn't answering right now"), status
    refused = await told(api, CAROL, 1, within=60)  # a second start there: refused in words
    assert "already running" in refused or "The database isn't answering right now" in refused, refused
    await away
    await api.wait_until(lambda: "rostra_card_status" not in buttons(api.top_level(CHANNEL)[0]), within=60)
    assert await status_of(storage_url, topic) == "stopped"
    assert not [t for t in ephemerals(api, ALICE) + ephemerals(api, BOB) if t.startswith("🚫")]


@pytest.mark.worker_env(
    ROSTRA_LIMITS__USER_COOLDOWN="60",
    ROSTRA_STORAGE__LEASE_SECONDS="2",
    ROSTRA_STORAGE__HEARTBEAT_SECONDS="1",
    ROSTRA_STORAGE__BUSY_TIMEOUT="0.1",
)
async def test_a_start_refused_with_the_database_away_is_asked_again_through_the_other_worker(
    api: FakeSlack, workers: tuple[Worker, Worker], storage_url: str
) -> None:
    """The first worker meets the database away (another process's lock, 30 s) just after it posted
    the opening card: Alice is told the debate could not start, and the worker cannot give her
    cooldown back. Once the database is back she asks again and the other worker receives it: the
    debate starts (the refused start's cooldown lapsed with its claim, in the store), where she was
    told "You started a debate moments ago" for up to a minute."""
    first, second = workers
    card = api.hold_next("chat.postMessage", when=lambda args: "thread_ts" not in args)
    await first.event(json.dumps(envelope(mention_event("debate Should cities ban cars?"))))
    await api.wait_until(lambda: card.held, within=60)
    held = asyncio.Event()
    away = asyncio.ensure_future(database_away(storage_url, DATABASE_AWAY, held))
    await asyncio.wait_for(held.wait(), 10)
    card.gate.set()  # the opening card is posted; the start then meets the database away
    assert await told(api, ALICE, 1, within=30) == f"🚫 The debate could not start: {TRY_AGAIN}"
    assert not away.done()
    await away
    await asyncio.sleep(3)  # a lease (2 s): the refused start's claim lapses

    await second.event(json.dumps(envelope(mention_event("debate Should cities ban cars?"))))
    cards = partial(api.top_level, CHANNEL)
    await api.wait_until(lambda: len(cards()) == 2 and "rostra_card_status" in buttons(cards()[1]), within=60)
    assert ephemerals(api, ALICE) == [f"🚫 The debate could not start: {TRY_AGAIN}"]  # no cooldown refusal
