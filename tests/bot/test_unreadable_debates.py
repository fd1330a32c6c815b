"""A stored debate that no longer loads (an event whose JSON no longer validates, a debates row
that does not parse) is named and left out by the listings, `rostra resume` and `rostra transcript`
of it say in one line that it cannot be read, and start-up does not trip over it: real `rostra`
processes on a real SQLite file and a real Postgres database, the row corrupted with SQL."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.runtime import Runtime
from core.ports import DebateRecord
from testkit.slack_api import FakeSlack
from testkit.slack_world import APP_TOKEN, BOT_TOKEN
from tests.helpers import REPO, RecordingSink, make_config

WAIT = 90  # seconds: the commands finish in a few; a hang fails the test instead of stalling it


def rostra(url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "SLACK_", "DISCORD_"))}
    clean.pop("ANTHROPIC_API_KEY", None)
    clean.update(ROSTRA_CONFIG=str(REPO / "config.yaml"), ROSTRA_STORAGE__URL=url, COLUMNS="200", **env)
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=REPO,
        env=clean,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def sql(url: str, statement: str, *params: Any) -> list[Any]:
    """One statement on the database itself (written in Postgres's `$1` style)."""
    if url.startswith("sqlite:///"):
        with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn:
            rows = conn.execute(statement.replace("$", "?"), params).fetchall()
            conn.commit()
            return rows

    async def run() -> list[Any]:
        conn = await asyncpg.connect(url)
        try:
            return list(await conn.fetch(statement, *params))
        finally:
            await conn.close()

    return asyncio.run(run())


def two_debates(url: str) -> tuple[str, str]:
    """Two finished terminal debates: (the one that will be corrupted, the one that stays readable)."""
    for topic in ("Should cities ban cars?", "Should homework be banned?"):
        done = rostra(url, "demo", topic, "--fast", "--rounds", "1")
        assert done.returncode == 0, done.stderr
    listed = json.loads(rostra(url, "debates", "--json").stdout)
    newest, oldest = (d["id"] for d in listed)
    return oldest, newest


def break_an_event(url: str, debate_id: str) -> None:
    """Its second event (the first phase change) stored with a null where a text must be."""
    [(payload,)] = sql(url, "SELECT payload FROM events WHERE debate_id = $1 AND seq = 2", debate_id)
    event = json.loads(payload)
    assert event["kind"] == "phase_changed"
    event["phase"] = None
    sql(url, "UPDATE events SET payload = $1 WHERE debate_id = $2 AND seq = 2", json.dumps(event), debate_id)


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr


def test_listings_name_an_unreadable_debate_and_show_the_rest(storage_url: str) -> None:
    bad, good = two_debates(storage_url)
    break_an_event(storage_url, bad)

    listed = rostra(storage_url, "debates")
    no_traceback(listed)
    assert listed.returncode == 0
    assert good in listed.stdout and bad not in listed.stdout
    [named] = [line for line in listed.stderr.splitlines() if bad in line]
    assert f"Debate {bad} cannot be read: its event 2 does not load" in named

    as_json = rostra(storage_url, "debates", "--json")
    assert as_json.returncode == 0
    assert [d["id"] for d in json.loads(as_json.stdout)] == [good]

    usage = rostra(storage_url, "usage", "--json")
    no_traceback(usage)
    assert usage.returncode == 0
    assert json.loads(usage.stdout)["total"]["debates"] == 1
    assert bad in usage.stderr


def test_a_debates_row_that_does_not_parse_is_left_out_and_named(storage_url: str) -> None:
    bad, good = two_debates(storage_url)
    sql(storage_url, "UPDATE debates SET spec = $1 WHERE id = $2", "{not json", bad)

    listed = rostra(storage_url, "debates", "--json")
    no_traceback(listed)
    assert listed.returncode == 0
    assert [d["id"] for d in json.loads(listed.stdout)] == [good]
    assert f"Debate {bad} cannot be read: its stored row does not load" in listed.stderr

    shown = rostra(storage_url, "transcript", bad)
    no_traceback(shown)
    assert shown.returncode == 1
    assert shown.stderr.strip().startswith(f"rostra: Debate {bad} cannot be read")


def test_resume_says_in_one_line_and_demo_still_runs(storage_url: str) -> None:
    bad, good = two_debates(storage_url)
    break_an_event(storage_url, bad)
    sql(storage_url, "UPDATE debates SET status = 'interrupted' WHERE id = $1", bad)

    resumed = rostra(storage_url, "resume", bad, "--fast")
    no_traceback(resumed)
    assert resumed.returncode == 1
    assert resumed.stderr.strip().splitlines() == [
        f"rostra: Debate {bad} cannot be read: its event 2 does not load"
        " (phase_changed.phase: Input should be a valid string)"
    ]

    demo = rostra(storage_url, "demo", "Should museums be free?", "--fast", "--rounds", "1")
    no_traceback(demo)
    assert demo.returncode == 0, demo.stderr
    assert good in rostra(storage_url, "debates").stdout


def test_the_bots_start_up_does_not_trip_over_it(storage_url: str) -> None:
    bad, _ = two_debates(storage_url)
    break_an_event(storage_url, bad)
    # no Discord to reach here (or a token it refuses): start-up fails after the store is open
    token = "MTQ1NjA3NDQ0Mzk4MDgwMDAwMA.GhXyZw.not-a-real-secret"
    done = rostra(storage_url, "discord", DISCORD_TOKEN=token, ROSTRA_MODEL__DEFAULT="scripted")
    no_traceback(done)
    assert done.returncode in (1, 2)
    assert done.stderr.strip().splitlines()[-1].startswith("rostra: ")


async def test_rostra_slack_refusing_its_token_is_still_one_line(storage_url: str) -> None:
    bad, _ = await asyncio.to_thread(two_debates, storage_url)
    await asyncio.to_thread(break_an_event, storage_url, bad)
    api = FakeSlack()
    await api.start()
    try:
        api.fail_next("auth.test", status=200, error="invalid_auth")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "SLACK_", "DISCORD_"))}
        env.update(
            ROSTRA_CONFIG=str(REPO / "config.yaml"),
            ROSTRA_STORAGE__URL=storage_url,
            ROSTRA_SLACK__API_URL=api.base_url,
            ROSTRA_MODEL__DEFAULT="scripted",
            SLACK_BOT_TOKEN=BOT_TOKEN,
            SLACK_APP_TOKEN=APP_TOKEN,
        )
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "slack", cwd=REPO, env=env, stderr=asyncio.subprocess.PIPE
        )
        assert proc.stderr is not None
        err = (await asyncio.wait_for(proc.stderr.read(), WAIT)).decode()
        assert await asyncio.wait_for(proc.wait(), 10) == 2
    finally:
        await api.stop()
    assert "Traceback" not in err, err
    refused = "rostra: Slack refused SLACK_BOT_TOKEN (invalid_auth); check the token."
    assert err.strip().splitlines()[-1] == refused


def test_resuming_the_cut_short_debates_names_it_once_and_goes_on(
    storage_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bad, _ = two_debates(storage_url)
    break_an_event(storage_url, bad)
    sql(storage_url, "UPDATE debates SET status = 'interrupted' WHERE id = $1", bad)
    asked: list[str] = []

    async def attach(record: DebateRecord, values: dict[str, str]) -> RecordingSink:
        asked.append(record.id)
        return RecordingSink()

    async def start_twice() -> tuple[int, int]:
        async with Runtime(make_config(tmp_path, storage={"url": storage_url})) as rt:
            first = await rt.resume_debates("terminal", attach)
            again = await rt.resume_debates("terminal", attach)
            return len(first), len(again)

    assert asyncio.run(start_twice()) == (0, 0)
    assert asked == [bad]  # looked at once, then left as it is
    [named] = [r.getMessage() for r in caplog.records if bad in r.getMessage()]
    assert named.startswith(f"Debate {bad} cannot be read: its event 2 does not load")
