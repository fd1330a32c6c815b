"""Many workspaces on Postgres: the OAuth v2 install through the real Bolt app over HTTP, with the
installations and the install links' states in the real Postgres server the tests start
(tests/pg.py), shared by two HTTP workers as behind one URL: the link comes from one worker, the
redirect reaches the other, and a debate then runs in that workspace through either."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.slack import create_app
from adapters.slack.install.installations import OAuthStores
from adapters.slack.install.workspaces import UNINSTALLED, WorkspaceFronts
from bot.config import Secrets
from bot.runtime import Runtime
from bot.slack_main import oauth_stores
from core.events import DebateCompleted
from core.storage import open_store
from core.storage.postgres import PostgresStore
from testkit.slack_api import FakeSlack
from testkit.slack_views import CLIENT_ID, CLIENT_SECRET
from testkit.slack_world import reaction_event, slash_fields
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import ALICE, BOB, SIGNING_SECRET, SLOW_FIRST_TURN, Harness
from tests.adapters.slack.interactive import block_actions, interact
from tests.adapters.slack.test_oauth import (
    CHANNEL2,
    COOKIE,
    SEALER,
    SECOND,
    SECRET_KEY,
    install,
    second_mention,
    send,
    team_envelope,
)
from tests.adapters.slack.test_resume import TIE
from tests.helpers import make_config, write_script

SECRETS = Secrets(
    slack_signing_secret=SIGNING_SECRET,
    slack_client_id=CLIENT_ID,
    slack_client_secret=CLIENT_SECRET,
    rostra_secret_key=SECRET_KEY,
)


@asynccontextmanager
async def pg_worker(
    tmp_path: Path, api: FakeSlack, url: str, *, script: dict[str, Any] = SLOW_FIRST_TURN, rounds: int = 1
) -> AsyncIterator[Harness]:
    """One `rostra slack` HTTP worker in many-workspace mode, its store and installations on `url`
    (`rounds` 2: the people vote between them, in the format's own window)."""
    config = make_config(
        tmp_path,
        storage={"url": url},
        model={"script": str(write_script(tmp_path, script)), "latency": 0},
        slack={"api_url": api.base_url, "edit_interval": 0, "human_window": None},
        limits={"user_cooldown": 0, "max_rounds": rounds},
        formats={"arena": {"exchanges_per_round": 1}},
    )
    clock = HeldClock(hold=5)
    async with Runtime(config, clock=clock, secrets=SECRETS) as rt:
        rt.enable_failover()  # one of several processes, as `rostra slack` runs it
        stores = oauth_stores(rt.store, SECRETS)  # what `rostra slack` does with a postgresql:// URL
        assert stores is not None and isinstance(rt.store, PostgresStore)
        app = create_app(rt, oauth_stores=stores)
        async with TestClient(TestServer(app.web_app())) as http:
            try:
                yield Harness(api, rt, app, http, clock)
            finally:
                await app.aclose()


async def stored_teams(url: str) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT key FROM installations WHERE platform = 'slack'")
        return [r["key"].partition(":")[2] for r in rows]
    finally:
        await conn.close()


async def redirect_to(worker: Harness, link_from: Harness, team: str) -> tuple[int, str, str]:
    """The install link (and its state cookie) from one worker; Slack's redirect to another."""
    page = await link_from.http.get("/slack/install")
    assert page.status == 200
    state = page.cookies[COOKIE].value
    code = worker.api.approve_install(team)
    back = await worker.http.get(
        f"/slack/oauth_redirect?code={code}&state={state}", headers={"Cookie": f"{COOKIE}={state}"}
    )
    return back.status, code, state


async def test_an_install_through_one_worker_serves_the_workspace_from_both(
    tmp_path: Path, api: FakeSlack, postgres_url: str
) -> None:
    async with (
        pg_worker(tmp_path, api, postgres_url) as first,
        pg_worker(tmp_path, api, postgres_url) as second,
    ):
        status, code, state = await redirect_to(second, first, SECOND)
        assert status == 200
        assert await stored_teams(postgres_url) == [SECOND]
        replayed = await first.http.get(
            f"/slack/oauth_redirect?code={code}&state={state}", headers={"Cookie": f"{COOKIE}={state}"}
        )
        assert replayed.status in (400, 401, 403)  # a state is good once, whichever worker sees it
        assert len(api.calls_to("oauth.v2.access")) == 1

        token = next(iter(api.installs.tokens))
        for worker in (first, second):
            fronts = worker.app.front
            assert isinstance(fronts, WorkspaceFronts)
            bot = await fronts.installations.async_find_bot(enterprise_id=None, team_id=SECOND)
            assert bot is not None and bot.bot_token == token

        await send(first, second_mention("debate Should cities ban cars? humans=off"))
        handle = await first.wait_running(CHANNEL2)
        await first.clock.release()  # type: ignore[attr-defined]
        await first.settle()
        assert (await handle.wait()).reason == "max_rounds"  # played to its end
        posts = api.calls_to("chat.postMessage")
        assert posts and {c.token for c in posts} == {token}


async def test_uninstalling_deletes_the_workspace_for_every_worker(
    tmp_path: Path, api: FakeSlack, postgres_url: str
) -> None:
    async with pg_worker(tmp_path, api, postgres_url) as slack:
        await install(slack, SECOND)
        await install(slack, "T0003")
        await send(slack, second_mention("debate Should cities ban cars?"))
        handle = await slack.wait_running(CHANNEL2)
        api.revoke(SECOND)
        uninstall: dict[str, Any] = {"type": "app_uninstalled", "event_ts": "1.5"}
        await send(slack, team_envelope(SECOND, uninstall, f"UBOT{SECOND}"))
        await handle.wait()
        end = (await slack.events(handle.debate_id))[-1]
        assert isinstance(end, DebateCompleted) and end.detail == UNINSTALLED
        assert await stored_teams(postgres_url) == ["T0003"]
    store = await open_store(postgres_url)  # as a worker started later sees it
    try:
        assert isinstance(store, PostgresStore)
        stores = OAuthStores(store, SEALER)
        assert await stores.installations.async_find_bot(enterprise_id=None, team_id=SECOND) is None
        assert await stores.installations.async_find_bot(enterprise_id=None, team_id="T0003") is not None
    finally:
        await store.close()


async def test_a_workspace_removed_through_one_worker_and_installed_again_is_served_by_both(
    tmp_path: Path, api: FakeSlack, postgres_url: str
) -> None:
    """Slack tells one worker that a workspace removed Rostra. The other ran that workspace's debate
    and kept its token: the debate went on, and once the workspace installed Rostra again that
    worker still answered with the revoked token, so its people got nothing. Now the debate stops
    wherever it runs, and each worker uses the token the installation holds now."""
    async with (
        pg_worker(tmp_path, api, postgres_url) as first,
        pg_worker(tmp_path, api, postgres_url) as second,
    ):
        await install(first, SECOND)
        await send(second, second_mention("debate Should cities ban cars?"))
        handle = await second.wait_running(CHANNEL2)  # run by the worker Slack will not tell
        uninstall: dict[str, Any] = {"type": "app_uninstalled", "event_ts": "1.5"}
        await send(first, team_envelope(SECOND, uninstall, f"UBOT{SECOND}"))
        await asyncio.wait_for(handle.wait(), 30)  # (before, it ran on until a post of it failed)
        end = (await second.events(handle.debate_id))[-1]
        assert isinstance(end, DebateCompleted) and end.detail == UNINSTALLED
        await second.settle()  # its closing post made, with the token it had then
        api.revoke(SECOND)  # the old token is dead

        await install(first, SECOND)  # installed again: a new token
        live = api.installs.tokens.items()
        [token] = [t for t, w in live if w.team == SECOND and t not in api.installs.revoked]
        posted = len(api.calls_to("chat.postMessage"))
        await send(second, second_mention("debate Should trains be free?"))
        again = await second.wait_running(CHANNEL2)
        later = api.calls_to("chat.postMessage")[posted:]
        assert later and {c.token for c in later} == {token}  # the card, with the new token
        await again.stop("test over")
        await second.settle()


async def test_a_reaction_reaching_a_worker_new_to_the_workspace_counts_in_its_debate(
    tmp_path: Path, api: FakeSlack, postgres_url: str
) -> None:
    """A worker passed reactions on only to the workspaces it had already served: one Slack sent a
    workspace's reaction to first lost the vote. Now it is the reaction's own workspace that takes it."""
    async with (
        pg_worker(tmp_path, api, postgres_url, script=TIE, rounds=2) as owner,
        pg_worker(tmp_path, api, postgres_url, script=TIE, rounds=2) as other,
    ):
        await install(owner, SECOND)
        await send(owner, second_mention("debate Should cities ban cars?"))
        handle = await owner.wait_running(CHANNEL2)
        await api.wait_until(lambda: handle.human_vote_open("v1"), within=30)
        await api.wait_until(lambda: any(m["text"].startswith("Vote: ") for m in owner.thread(CHANNEL2)))
        [card] = [m for m in owner.thread(CHANNEL2) if m["text"].startswith("Vote: ")]
        assert other.running(CHANNEL2) is None  # and it has served nobody in that workspace yet
        read = partial(api.calls_to, "reactions.get")  # the owner read its card: events only from here
        await api.wait_until(lambda: any(c.args.get("timestamp") == card["ts"] for c in read()))
        reacted = reaction_event(True, BOB, "x", card["ts"], channel=CHANNEL2)
        await send(other, team_envelope(SECOND, reacted, f"UBOT{SECOND}"))

        def counted() -> dict[str, str]:
            return {p: v.choice for p, v in handle.state.ballots["v1"].human_votes.items()}

        await api.wait_until(lambda: counted() == {BOB: "replace"}, within=30)
        await handle.stop("test over")
        await owner.settle()


async def installations_away(url: str, seconds: float, held: asyncio.Event) -> None:
    """Another process's long write holding the installations table: every read of it waits."""
    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            await conn.execute("LOCK TABLE installations IN ACCESS EXCLUSIVE MODE")
            held.set()
            await asyncio.sleep(seconds)
    finally:
        await conn.close()


@pytest.mark.slow
async def test_while_the_installations_do_not_answer_people_are_told_and_nothing_starts_behind_them(
    tmp_path: Path, api: FakeSlack, postgres_url: str
) -> None:
    """Bolt reads the workspace's installation to authorize every request. With that table held for
    30 s, a `/debate` waited the 30 s: Slack had long shown the person its own timeout, and then the
    debate started anyway. Now the person is told within Slack's 3 s, a click is answered too, and a
    mention (an event) is refused so that Slack sends it again: it starts once the database is back."""
    async with pg_worker(tmp_path, api, postgres_url) as slack:
        await install(slack, SECOND)
        empty = slash_fields("", user=ALICE, channel=CHANNEL2, response_url=f"{api.root}/respond/{ALICE}")
        empty["team_id"], empty["trigger_id"] = SECOND, api.trigger(ALICE)
        assert (await slack.post(urlencode(empty), "application/x-www-form-urlencoded")).status == 200
        await api.wait_until(lambda: len(api.views.opened) == 1)  # the Start modal, open on a screen
        held = asyncio.Event()
        away = asyncio.ensure_future(installations_away(postgres_url, 30.0, held))
        await asyncio.wait_for(held.wait(), 10)

        answers = f"{api.root}/respond/{ALICE}"
        fields = slash_fields(
            "debate Should cities ban cars?", user=ALICE, channel=CHANNEL2, response_url=answers
        )
        fields["team_id"] = SECOND
        started = time.perf_counter()
        reply = await slack.post(urlencode(fields), "application/x-www-form-urlencoded")
        assert time.perf_counter() - started < 3.0
        assert reply.status == 200
        said = json.loads(await reply.text())
        told = "🚫 The database isn't answering right now; try again in a moment."
        assert said == {"response_type": "ephemeral", "text": told}

        click = block_actions(slack, ALICE, {"type": "button", "action_id": "rostra_status", "value": "x"})
        click["team"]["id"] = SECOND
        click["response_url"] = answers
        assert (await interact(slack, click)).status == 200
        assert api.responses[-1]["text"] == told

        submitted = {
            "type": "view_submission",
            "team": {"id": SECOND, "domain": "second"},
            "user": {"id": ALICE, "username": "alice", "team_id": SECOND},
            "api_app_id": "A0001",
            "token": "legacy",
            "trigger_id": api.trigger(ALICE),
            "view": api.submission_state(api.last_view().id, {"topic": "Should cities ban cars?"}),
        }
        answered = await interact(slack, submitted)
        assert answered.status == 200  # shown in the modal, under its topic; the modal stays open
        assert json.loads(await answered.text()) == {"response_action": "errors", "errors": {"topic": told}}

        mention = json.dumps(second_mention("debate Should cities ban cars?"))
        assert (await slack.post(mention, "application/json")).status == 500  # Slack sends it again
        assert not away.done()  # all of it while the table was held
        await away
        assert slack.running(CHANNEL2) is None  # nothing started behind the person's back
        assert (await slack.post(mention, "application/json")).status == 200  # Slack's retry
        handle = await slack.wait_running(CHANNEL2)
        await handle.stop("test over")
        await slack.settle()
