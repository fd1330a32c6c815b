"""Many workspaces: the OAuth v2 install through the real Bolt app over HTTP (install page, state
cookie, redirect, oauth.v2.access against the fake), the workspace's token stored in Rostra's SQLite
file, a debate then running in that workspace with its own token, and app_uninstalled / tokens_revoked
stopping its debates and deleting its tokens."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.slack import create_app
from adapters.slack.errors import SlackConfigError
from adapters.slack.inbound.gate import INSTALL_AWAY
from adapters.slack.install.installations import OAuthStores
from adapters.slack.install.sealing import Sealer
from adapters.slack.install.workspaces import UNINSTALLED, WorkspaceFronts
from bot.config import Secrets
from bot.runtime import Runtime
from bot.slack_main import choose_mode, oauth_stores
from core.events import DebateCompleted
from core.ports import Installations
from testkit.slack_api import FakeSlack
from testkit.slack_views import CLIENT_ID, CLIENT_SECRET
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    SIGNING_SECRET,
    SLOW_FIRST_TURN,
    Harness,
    mention_event,
    open_harness,
)
from tests.database_away import database_away
from tests.helpers import make_config, write_script

SECOND = "T0002"
CHANNEL2 = "C2DEBATE"
COOKIE = "slack-app-oauth-state"
SECRET_KEY = "Zm9yLXRlc3RzLW9ubHktbm90LWEtcmVhbC1rZXktLS0="  # a Fernet key (32 bytes, urlsafe base64)
SEALER = Sealer(SECRET_KEY)


@asynccontextmanager
async def oauth_harness(
    tmp_path: Path, api: FakeSlack, storage: dict[str, Any] | None = None, **clock: Any
) -> AsyncIterator[Harness]:
    config = make_config(
        tmp_path,
        storage=storage or {},
        model={"script": str(write_script(tmp_path, SLOW_FIRST_TURN)), "latency": 0},
        slack={"api_url": api.base_url, "edit_interval": 0},
        limits={"user_cooldown": 0, "max_rounds": 1},
        formats={"arena": {"exchanges_per_round": 1}},
    )
    secrets = Secrets(
        slack_signing_secret=SIGNING_SECRET,
        slack_client_id=CLIENT_ID,
        slack_client_secret=CLIENT_SECRET,
        rostra_secret_key=SECRET_KEY,
    )
    the_clock = clock.get("clock") or HeldClock(hold=5)
    async with Runtime(config, clock=the_clock, secrets=secrets) as rt:
        app = create_app(rt, oauth_stores=oauth_stores(rt.store, secrets))
        async with TestClient(TestServer(app.web_app())) as http:
            try:
                yield Harness(api, rt, app, http, the_clock)
            finally:
                await app.aclose()


def team_envelope(team: str, event: dict[str, Any], bot_user: str) -> dict[str, Any]:
    return {
        "token": "legacy",
        "team_id": team,
        "api_app_id": "A0001",
        "type": "event_callback",
        "event_id": f"Ev{uuid.uuid4().hex[:12].upper()}",
        "event_time": int(time.time()),
        "event": event,
        "authorizations": [{"team_id": team, "user_id": bot_user, "is_bot": True}],
    }


def second_mention(text: str) -> dict[str, Any]:
    """Someone in the second workspace mentions Rostra's bot user there."""
    event = mention_event(text, channel=CHANNEL2)
    event["text"] = event["text"].replace("<@UBOT>", f"<@UBOT{SECOND}>")
    event["team"] = SECOND
    return team_envelope(SECOND, event, f"UBOT{SECOND}")


async def send(slack: Harness, envelope: dict[str, Any]) -> None:
    response = await slack.post(json.dumps(envelope), "application/json")
    assert response.status == 200, await response.text()


async def install(slack: Harness, team: str) -> None:
    """What an admin does: open the install link, approve in Slack, come back to the redirect."""
    page = await slack.http.get("/slack/install")
    assert page.status == 200
    html = await page.text()
    link = re.search(r'href="(https://slack\.com/oauth/v2/authorize\?[^"]+)"', html)
    assert link is not None, html
    query = parse_qs(urlparse(link.group(1).replace("&amp;", "&")).query)
    assert query["client_id"] == [CLIENT_ID]
    assert "chat:write" in query["scope"][0].split(",")
    state = query["state"][0]
    cookie = page.cookies[COOKIE].value
    assert cookie == state
    code = slack.api.approve_install(team)
    back = await slack.http.get(
        f"/slack/oauth_redirect?code={code}&state={state}", headers={"Cookie": f"{COOKIE}={cookie}"}
    )
    assert back.status == 200, await back.text()


def stored_teams(tmp_path: Path) -> list[str]:
    with sqlite3.connect(tmp_path / "rostra.db") as db:
        keys = db.execute("SELECT key FROM installations WHERE platform = 'slack'")
        return [key.partition(":")[2] for (key,) in keys]


async def test_an_install_stores_the_token_and_a_debate_runs_there(tmp_path: Path, api: FakeSlack) -> None:
    async with oauth_harness(tmp_path, api) as slack:
        await install(slack, SECOND)
        (exchange,) = api.calls_to("oauth.v2.access")
        assert exchange.args["code"].startswith("code-")
        assert "client_secret" not in exchange.args  # sent as HTTP Basic auth, never as a parameter
        assert stored_teams(tmp_path) == [SECOND]
        fronts = slack.app.front
        assert isinstance(fronts, WorkspaceFronts)
        bot = await fronts.installations.async_find_bot(enterprise_id=None, team_id=SECOND)
        assert bot is not None
        token = bot.bot_token
        assert token == next(iter(api.installs.tokens))
        assert bot.bot_user_id == f"UBOT{SECOND}"

        await send(slack, second_mention("debate Should cities ban cars? humans=off"))
        handle = await slack.wait_running(CHANNEL2)
        assert handle.binding.scope == SECOND
        assert handle.spec.topic == "Should cities ban cars?"
        await slack.clock.release()  # type: ignore[attr-defined]
        await slack.settle()
        posts = api.calls_to("chat.postMessage")
        assert posts and {c.token for c in posts} == {token}  # that workspace's own token
        thread = slack.thread(CHANNEL2)
        assert thread[-2]["text"].startswith("The end")
        assert thread[-1]["text"].startswith(
            "🏁 *Debate over:* Should cities ban cars?"
        )  # to the channel too


async def test_a_replayed_or_forged_redirect_installs_nothing(tmp_path: Path, api: FakeSlack) -> None:
    async with oauth_harness(tmp_path, api) as slack:
        code = api.approve_install(SECOND)
        forged = await slack.http.get(
            f"/slack/oauth_redirect?code={code}&state=made-up", headers={"Cookie": f"{COOKIE}=made-up"}
        )
        assert forged.status in (400, 401, 403)
        assert api.calls_to("oauth.v2.access") == []
        assert stored_teams(tmp_path) == []


async def test_uninstalling_stops_the_workspaces_debates_and_deletes_its_tokens(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with oauth_harness(tmp_path, api) as slack:
        await install(slack, SECOND)
        await send(slack, second_mention("debate Should cities ban cars?"))
        handle = await slack.wait_running(CHANNEL2)
        await api.wait_until(lambda: slack.clock.waiting == 1)  # type: ignore[attr-defined]

        api.revoke(SECOND)  # Slack revokes the tokens, then tells the app
        uninstall = {"type": "app_uninstalled", "event_ts": f"{time.time():.6f}"}
        await send(slack, team_envelope(SECOND, uninstall, f"UBOT{SECOND}"))
        await api.wait_until(lambda: handle.done)
        await handle.wait()
        end = (await slack.events(handle.debate_id))[-1]
        assert isinstance(end, DebateCompleted) and end.reason == "stopped"
        assert end.detail == UNINSTALLED
        assert stored_teams(tmp_path) == []
        with pytest.raises(LookupError):
            await slack.app.front.front_for(SECOND)  # type: ignore[attr-defined]


async def test_tokens_revoked_for_the_bot_removes_the_workspace(tmp_path: Path, api: FakeSlack) -> None:
    async with oauth_harness(tmp_path, api) as slack:
        await install(slack, SECOND)
        await install(slack, "T0003")
        revoked = {"type": "tokens_revoked", "tokens": {"bot": [f"UBOT{SECOND}"]}, "event_ts": "1.2"}
        await send(slack, team_envelope(SECOND, revoked, f"UBOT{SECOND}"))
        await api.wait_until(lambda: stored_teams(tmp_path) == ["T0003"])


async def test_many_workspaces_need_both_credentials_and_http_mode(tmp_path: Path, api: FakeSlack) -> None:
    config = make_config(tmp_path, slack={"api_url": api.base_url})
    cases = [
        (Secrets(slack_signing_secret=SIGNING_SECRET, slack_client_id=CLIENT_ID), {}, "SLACK_CLIENT_SECRET"),
        (
            Secrets(slack_signing_secret=SIGNING_SECRET, slack_client_id=CLIENT_ID, slack_client_secret="s"),
            {"socket_mode": True},
            "unset SLACK_APP_TOKEN",
        ),
        (Secrets(slack_client_id=CLIENT_ID, slack_client_secret="s"), {}, "SLACK_SIGNING_SECRET"),
    ]
    for secrets, kwargs, says in cases:
        async with Runtime(config, secrets=secrets) as rt:
            assert isinstance(rt.store, Installations)
            with pytest.raises(SlackConfigError, match=says):
                create_app(rt, oauth_stores=OAuthStores(rt.store, SEALER), **kwargs)


async def test_single_workspace_mode_stops_its_debates_when_removed(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    async with open_harness(tmp_path, api, script=SLOW_FIRST_TURN, clock=clock) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: clock.waiting == 1)
        await slack.event({"type": "app_uninstalled", "event_ts": f"{time.time():.6f}"})
        await api.wait_until(lambda: handle.done)
        end = (await slack.events(handle.debate_id))[-1]
        assert isinstance(end, DebateCompleted) and end.detail == UNINSTALLED


async def test_serving_many_workspaces_needs_no_bot_token_and_uses_http(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    secrets = Secrets(
        slack_signing_secret=SIGNING_SECRET,
        slack_client_id=CLIENT_ID,
        slack_client_secret=CLIENT_SECRET,
        rostra_secret_key=SECRET_KEY,
    )
    mode = choose_mode(secrets, config.slack, force_http=False, host=None, port=4000)
    assert (mode.socket, mode.port) == (False, 4000)
    async with Runtime(config, secrets=secrets) as rt:
        assert oauth_stores(rt.store, secrets) is not None
        assert oauth_stores(rt.store, Secrets(slack_bot_token="xoxb-1")) is None


async def test_after_a_restart_each_workspaces_debate_resumes_with_its_own_token(
    tmp_path: Path, api: FakeSlack
) -> None:
    async with oauth_harness(tmp_path, api) as before:
        await install(before, SECOND)
        await send(before, second_mention("debate Should cities ban cars?"))
        handle = await before.wait_running(CHANNEL2)
        await api.wait_until(lambda: before.clock.waiting == 1)  # type: ignore[attr-defined]
        (token,) = api.installs.tokens
    resumed_from = len(api.calls)
    clock = HeldClock(hold=5)
    async with oauth_harness(tmp_path, api, clock=clock) as after:
        [resumed] = await after.app.resume_debates()
        assert resumed.debate_id == handle.debate_id
        assert resumed.binding.scope == SECOND
        await clock.release()
        await after.settle()
        end = (await after.events(handle.debate_id))[-1]
        assert isinstance(end, DebateCompleted)
        later = [c for c in api.calls[resumed_from:] if c.method.startswith("chat.")]
        assert later and {c.token for c in later} == {token}
        assert after.thread(CHANNEL2)[-2]["text"].startswith("The end")


@pytest.mark.slow
async def test_while_the_database_is_away_the_install_pages_say_so_and_the_install_works_after(
    tmp_path: Path, api: FakeSlack
) -> None:
    """The install link stores a one-time state and Slack's redirect consumes it: with the database
    locked for 30 s both were a bare HTTP 500. Now the admin reads what happened and what to do."""
    async with oauth_harness(tmp_path, api, storage={"busy_timeout": 0.2}) as slack:
        page = await slack.http.get("/slack/install")
        state = page.cookies[COOKIE].value  # a link opened before the database went away
        held = asyncio.Event()
        away = asyncio.ensure_future(database_away(slack.rt.config.storage.url, 30.0, held))
        await asyncio.wait_for(held.wait(), 10)

        refused = await slack.http.get("/slack/install")
        assert refused.status == 503 and await refused.text() == INSTALL_AWAY
        code = api.approve_install(SECOND)
        back = await slack.http.get(
            f"/slack/oauth_redirect?code={code}&state={state}", headers={"Cookie": f"{COOKIE}={state}"}
        )
        assert back.status == 503 and await back.text() == INSTALL_AWAY
        assert api.calls_to("oauth.v2.access") == []  # the code was not spent: the state came first
        assert not away.done()

        await away
        await install(slack, SECOND)
        assert stored_teams(tmp_path) == [SECOND]
