"""The App Home tab's list leaves out a stored debate whose row no longer loads and names it in the
log; the rest is listed as ever (real Bolt over signed HTTP, the row corrupted with SQL)."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from tests.adapters.slack.conftest import BOB, Harness
from tests.adapters.slack.test_home import home_event, home_text


async def test_an_unreadable_debate_is_left_out_of_the_home_tab(
    slack: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    for topic, channel in (("Should cities ban cars?", "CFIRST"), ("Tabs or spaces?", "CSECOND")):
        await slack.mention(f"debate {topic} humans=off", channel=channel)
        await slack.wait_running(channel)
        await slack.settle()
    by_topic = {r.topic: r.id for r in await slack.rt.store.list_debates(5)}
    bad = by_topic["Should cities ban cars?"]
    database = slack.rt.config.storage.url.removeprefix("sqlite:///")
    with closing(sqlite3.connect(database)) as conn:
        conn.execute("UPDATE debates SET created_at = 'not a time' WHERE id = ?", (bad,))
        conn.commit()

    await slack.event(home_event(BOB))
    await slack.api.wait_until(lambda: BOB in slack.api.views.homes)

    text = home_text(slack.api.views.homes[BOB])
    assert "Tabs or spaces?" in text
    assert "Should cities ban cars?" not in text
    assert any(f"Debate {bad} cannot be read" in r.getMessage() for r in caplog.records)
