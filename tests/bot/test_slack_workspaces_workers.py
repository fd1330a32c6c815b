"""Many workspaces, two `rostra slack --http` worker processes on one database (both backends):
Rostra installed through one worker serves the workspace from the other; a removal Slack tells one
worker ends the workspace's debate that the other runs; and once the workspace installs Rostra
again, the worker that ran that debate answers its people with the new token, not the revoked one."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import aiohttp
import pytest

from testkit.slack_api import FakeSlack
from testkit.slack_views import CLIENT_ID, CLIENT_SECRET
from tests.adapters.slack.test_oauth import (
    CHANNEL2,
    COOKIE,
    SECOND,
    SECRET_KEY,
    second_mention,
    team_envelope,
)
from tests.bot.freezing import freeze, wake
from tests.bot.slack_cluster import (
    LONG_TURNS,
    Worker,
    owner_and_other,
    quiet,
    running_card,
    running_workers,
    status_of,
    worker_env,
)
from tests.helpers import write_script

pytestmark = pytest.mark.slow

TOPIC = "Should cities ban cars?"
REMOVED = "Rostra was removed from this workspace"
LEASE, HEARTBEAT = 6.0, 1.0


@pytest.fixture
def workers(tmp_path: Path, api: FakeSlack, storage_url: str) -> Iterator[tuple[Worker, Worker]]:
    """Two workers in many-workspace mode: no bot token, the OAuth client and a sealing key; as on
    two machines (a frozen worker's pid is not looked at), with a short lease."""
    envs = []
    for n in range(2):
        oauth = {
            "SLACK_CLIENT_ID": CLIENT_ID,
            "SLACK_CLIENT_SECRET": CLIENT_SECRET,
            "ROSTRA_SECRET_KEY": SECRET_KEY,
            "ROSTRA_STORAGE__LEASE_SECONDS": str(LEASE),
            "ROSTRA_STORAGE__HEARTBEAT_SECONDS": str(HEARTBEAT),
            "ROSTRA_INSTANCE": f"machine-{n}",
        }
        env = worker_env(storage_url, write_script(tmp_path, LONG_TURNS), api, oauth)
        del env["SLACK_BOT_TOKEN"]
        envs.append(env)
    with running_workers(envs, tmp_path / "stderr.log") as (first, second):
        yield first, second


async def _install(api: FakeSlack, link_from: Worker, redirect_to: Worker) -> str:
    """An admin opens the install link served by one worker and Slack redirects them to the other;
    the workspace's new bot token."""
    await link_from.ready()
    await redirect_to.ready()
    base = link_from.url.removesuffix("/slack/events")
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/slack/install") as page:
            assert page.status == 200
            html = await page.text()
        link = re.search(r'href="(https://slack\.com/oauth/v2/authorize\?[^"]+)"', html)
        assert link is not None, html
        state = parse_qs(urlparse(link.group(1).replace("&amp;", "&")).query)["state"][0]
        code = api.approve_install(SECOND)
        back_to = redirect_to.url.removesuffix("/slack/events")
        headers = {"Cookie": f"{COOKIE}={state}"}
        async with http.get(
            f"{back_to}/slack/oauth_redirect?code={code}&state={state}", headers=headers
        ) as back:
            assert back.status == 200, await back.text()
    [token] = [
        t for t, w in api.installs.tokens.items() if w.team == SECOND and t not in api.installs.revoked
    ]
    return token


def _cards(api: FakeSlack) -> list[dict[str, Any]]:
    return api.top_level(CHANNEL2)


async def test_a_removal_told_to_one_worker_ends_the_debate_the_other_runs_and_a_new_install_serves_both(
    api: FakeSlack, workers: tuple[Worker, Worker], storage_url: str
) -> None:
    first, second = workers
    old = await _install(api, first, second)
    await second.event(json.dumps(second_mention(f"debate {TOPIC}")))
    await api.wait_until(lambda: len(_cards(api)) == 1, within=30)
    owner, other = await owner_and_other([first, second], storage_url, TOPIC)
    assert await status_of(storage_url, TOPIC) == "running"

    uninstalled: dict[str, Any] = {"type": "app_uninstalled", "event_ts": "1.5"}
    await other.event(json.dumps(team_envelope(SECOND, uninstalled, f"UBOT{SECOND}")))
    for _ in range(300):  # it ends through the store, on the worker Slack did not tell
        if await status_of(storage_url, TOPIC) != "running":
            break
        await asyncio.sleep(0.1)
    assert await status_of(storage_url, TOPIC) == "stopped"
    card = _cards(api)[0]
    await api.wait_until(lambda: REMOVED in api.thread(CHANNEL2, card["ts"])[-1]["text"], within=20)
    api.revoke(SECOND)  # Slack has revoked the old token

    new = await _install(api, other, other)  # installed again, through the worker that was told
    assert new != old
    posted = len(api.calls_to("chat.postMessage"))
    await owner.event(json.dumps(second_mention("debate Should trains be free?")))
    await api.wait_until(lambda: len(_cards(api)) == 2, within=30)  # the new debate's card, shown
    later = api.calls_to("chat.postMessage")[posted:]
    assert later and {c.token for c in later} == {new}  # by the worker that ran the first, new token


async def test_a_removal_while_the_debates_worker_is_frozen_ends_it_and_the_woken_worker_stays_quiet(
    api: FakeSlack, workers: tuple[Worker, Worker], storage_url: str
) -> None:
    """The worker running the workspace's debate is frozen (SIGSTOP) when Slack tells the other that
    the workspace removed Rostra: the debate ends all the same, and the frozen worker, woken, posts
    nothing more there. It is frozen while it sends nothing (`quiet`): a request it had begun would
    still reach Slack as it wakes, which no fence can take back."""
    first, second = workers
    await _install(api, first, second)
    await second.event(json.dumps(second_mention(f"debate {TOPIC}")))
    await running_card(api, CHANNEL2)
    owner, other = await owner_and_other([first, second], storage_url, TOPIC)
    await quiet(api)  # its first turn takes a minute: nothing is being sent as it freezes
    freeze(owner.process, storage_url)
    try:
        uninstalled: dict[str, Any] = {"type": "app_uninstalled", "event_ts": "1.5"}
        await other.event(json.dumps(team_envelope(SECOND, uninstalled, f"UBOT{SECOND}")))
        api.revoke(SECOND)
        deadline = time.monotonic() + LEASE + HEARTBEAT + 30
        while await status_of(storage_url, TOPIC) == "running":  # (before, it stayed running for good)
            assert time.monotonic() < deadline, "the debate ran on"
            await asyncio.sleep(0.2)
    finally:
        woken = time.monotonic()
        wake(owner.process)
    assert await status_of(storage_url, TOPIC) == "stopped"
    await asyncio.sleep(LEASE + HEARTBEAT)  # the woken worker's time to post, were it to
    assert not [c for c in api.calls if c.at > woken and c.method.startswith("chat.")]
    assert await status_of(storage_url, TOPIC) == "stopped"
    assert owner.process.poll() is None  # awake, not crashed
    said = owner.log.read_text(encoding="utf-8")
    assert "could not reattach" not in said  # (before: a traceback at every look, every second)
