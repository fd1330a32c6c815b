"""`rostra slack`: clear one-line errors for missing tokens, and a real HTTP server run end to end."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.config import Secrets
from bot.errors import UsageError
from bot.exits import BOT_STOPPED
from bot.slack_main import Mode, add_slack_commands, choose_mode, serve
from core.clock import FakeClock
from testkit.slack_api import FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import (
    APP_TOKEN,
    BOT_TOKEN,
    CHANNEL,
    SCRIPT,
    SIGNING_SECRET,
    envelope,
    mention_event,
    reaction_event,
    sign,
)
from tests.bot.slack_cluster import rostra_slack
from tests.helpers import CONFIG_PATH, REPO, make_config, write_script


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rostra")
    parser.add_argument("--config")
    add_slack_commands(parser.add_subparsers(dest="command"))
    return parser.parse_args(["--config", str(CONFIG_PATH), *argv])


def test_missing_bot_token_is_a_usage_error() -> None:
    args = parse("slack")
    with pytest.raises(UsageError, match="SLACK_BOT_TOKEN is not set"):
        args.handler(args)


def test_http_mode_needs_the_signing_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    args = parse("slack", "--port", "4000")
    with pytest.raises(UsageError, match="SLACK_SIGNING_SECRET is not set"):
        args.handler(args)


def test_the_mode_follows_the_tokens() -> None:
    settings = make_config(Path("/tmp")).slack
    socket_mode = choose_mode(
        Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN),
        settings,
        force_http=False,
        host=None,
        port=None,
    )
    assert socket_mode == Mode(socket=True, app_token=APP_TOKEN)
    both = Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN, slack_signing_secret=SIGNING_SECRET)
    assert choose_mode(both, settings, force_http=True, host=None, port=4100) == Mode(
        socket=False, host="0.0.0.0", port=4100
    )
    with pytest.raises(UsageError, match="starts with xapp-"):
        choose_mode(
            Secrets(slack_bot_token=BOT_TOKEN, slack_app_token="xoxb-wrong"),
            settings,
            force_http=False,
            host=None,
            port=None,
        )


def test_a_bad_port_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("slack", "--port", "99999")
    assert "--port must be between 1 and 65535" in capsys.readouterr().err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_http_mode_serves_signed_requests(tmp_path: Path, api: FakeSlack) -> None:
    config = make_config(
        tmp_path,
        model={"script": str(write_script(tmp_path, SCRIPT)), "latency": 0},
        slack={"api_url": api.base_url, "edit_interval": 0, "post_results": False},
        limits={"user_cooldown": 0, "max_rounds": 1},
        formats={"arena": {"exchanges_per_round": 1}},
    )
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET)
    port = free_port()
    stop = asyncio.Event()
    serving = asyncio.create_task(
        serve(config, secrets, Mode(socket=False, host="127.0.0.1", port=port), stop=stop, clock=FakeClock())
    )
    try:
        body = json.dumps(envelope(mention_event("debate Should cities ban cars?")))
        url = f"http://127.0.0.1:{port}/slack/events"
        async with aiohttp.ClientSession() as http:
            for _ in range(100):
                try:
                    async with http.post(
                        url, data=body, headers={**sign(body), "Content-Type": "application/json"}
                    ) as r:
                        assert r.status == 200
                        break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.02)
            else:
                pytest.fail("the server never came up")
            async with http.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
                assert r.status == 401
        await api.wait_until(lambda: any(m["text"].startswith("The end") for m in api.messages.values()))
    finally:
        stop.set()
        assert await serving == 0
    assert api.calls[0].method == "auth.test"


async def test_a_token_slack_rejects_ends_with_one_line(
    tmp_path: Path, api: FakeSlack, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(tmp_path, slack={"api_url": api.base_url})
    api.fail_next("auth.test", status=200, error="invalid_auth")
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN)
    code = await serve(config, secrets, Mode(socket=True, app_token=APP_TOKEN), stop=asyncio.Event())
    assert code == 2  # a configuration error: restarting will not help
    assert (
        capsys.readouterr().err.strip()
        == "rostra: Slack refused SLACK_BOT_TOKEN (invalid_auth); check the token."
    )


async def test_slack_failing_as_the_bot_starts_is_said_as_slack_not_answering_not_as_a_bad_token(
    tmp_path: Path, api: FakeSlack, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(tmp_path, slack={"api_url": api.base_url})
    api.fail_next("auth.test", status=500, error="internal_error", for_seconds=10)  # past slack_sdk's retries
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN)
    code = await serve(config, secrets, Mode(socket=True, app_token=APP_TOKEN), stop=asyncio.Event())
    assert code == 1  # not a configuration error: starting again once Slack answers serves
    assert capsys.readouterr().err.strip() == (
        "rostra: Slack isn't answering right now; try again in a moment."
        " (auth.test: HTTP 500, internal_error)"
    )


async def test_serving_again_picks_the_debate_up_in_its_thread(tmp_path: Path, api: FakeSlack) -> None:
    """`rostra slack` stopped mid-vote and started again on the same database: once it listens, the
    debate goes on in the same thread and the votes from before the restart still count."""
    script = {
        **SCRIPT,
        "observer": [
            {"vote": "keep", "reason": "Fine."},
            {"vote": "keep", "reason": "Fine."},
            {"vote": "replace", "reason": "Vague."},
        ],
    }
    config = make_config(
        tmp_path,
        model={"script": str(write_script(tmp_path, script)), "latency": 0},
        slack={"api_url": api.base_url, "edit_interval": 0, "post_results": False},
        limits={"user_cooldown": 0, "max_rounds": 2},
        formats={"arena": {"exchanges_per_round": 1}},
    )
    secrets = Secrets(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET)
    port = free_port()
    url = f"http://127.0.0.1:{port}/slack/events"

    async def send(event: dict[str, object]) -> None:
        body = json.dumps(envelope(event))
        async with aiohttp.ClientSession() as http:
            for _ in range(200):
                try:
                    async with http.post(
                        url, data=body, headers={**sign(body), "Content-Type": "application/json"}
                    ) as r:
                        assert r.status == 200
                        return
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.02)
        pytest.fail("the server never came up")

    def tie_shown() -> int:
        return sum(
            "It's a tie" in json.dumps(c.args, ensure_ascii=False)
            for c in api.calls
            if c.method in ("chat.postMessage", "chat.update")  # a card may be posted already open
        )

    stop = asyncio.Event()
    mode = Mode(socket=False, host="127.0.0.1", port=port)
    serving = asyncio.create_task(serve(config, secrets, mode, stop=stop, clock=HeldClock(hold=5)))
    await send(mention_event("debate Should cities ban cars?"))
    await api.wait_until(lambda: tie_shown() > 0 and bool(api.calls_to("reactions.add")))  # card and ballot
    (opening,) = api.top_level(CHANNEL)
    card = api.calls_to("reactions.add")[0].args["timestamp"]
    api.react(CHANNEL, card, "x", "UALICE")
    await send(reaction_event(True, "UALICE", "x", card))
    await api.wait_until(  # alice's vote is counted and shown on the card before the stop
        lambda: (
            "People so far: ✅ Keep 0 · ❌ Replace 1"
            in json.dumps(api.messages[(CHANNEL, card)], ensure_ascii=False)
        )
    )
    stop.set()
    assert await serving == 0
    tied_before = tie_shown()

    stop = asyncio.Event()
    clock = HeldClock(hold=5)
    serving = asyncio.create_task(serve(config, secrets, mode, stop=stop, clock=clock))
    try:
        await api.wait_until(lambda: tie_shown() > tied_before)  # the window is open again
        api.react(CHANNEL, card, "x", "UBOB")
        await send(reaction_event(True, "UBOB", "x", card))
        await api.wait_until(
            lambda: "❌ Replace 2" in json.dumps(api.messages[(CHANNEL, card)], ensure_ascii=False)
        )
        await clock.release()
        await api.wait_until(lambda: api.thread(CHANNEL, opening["ts"])[-1]["text"].startswith("The end"))
    finally:
        stop.set()
        assert await serving == 0
    assert [m["ts"] for m in api.top_level(CHANNEL)] == [opening["ts"]]
    thread = api.thread(CHANNEL, opening["ts"])
    assert [m["ts"] for m in thread if m["text"].startswith("Vote: ")] == [card]
    assert "People: ✅ Keep 0 · ❌ Replace 2" in json.dumps(api.messages[(CHANNEL, card)], ensure_ascii=False)


@pytest.mark.slow
async def test_a_slack_bot_killed_mid_vote_resumes_with_every_vote(tmp_path: Path, api: FakeSlack) -> None:
    """`rostra slack` SIGKILLed while people vote, then started again: the vote card reopens in the
    same thread, and votes from before the kill, while it was down and after it all count."""
    script = write_script(
        tmp_path,
        {
            **SCRIPT,
            "observer": [
                {"vote": "keep", "reason": "Fine."},
                {"vote": "keep", "reason": "Fine."},
                {"vote": "replace", "reason": "Vague."},
            ],
        },
    )
    db = tmp_path / "rostra.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "SLACK_", "ANTHROPIC_"))}
    env.update(
        ROSTRA_CONFIG=str(CONFIG_PATH),
        ROSTRA_STORAGE__URL=f"sqlite:///{db}",
        ROSTRA_MODEL__DEFAULT="scripted",
        ROSTRA_MODEL__SCRIPT=str(script),
        ROSTRA_MODEL__LATENCY="0",
        ROSTRA_LIMITS__MAX_ROUNDS="2",
        ROSTRA_LIMITS__USER_COOLDOWN="0",
        ROSTRA_FORMATS__ARENA__EXCHANGES_PER_ROUND="1",
        ROSTRA_SLACK__API_URL=api.base_url,
        ROSTRA_SLACK__EDIT_INTERVAL="0",
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
    )
    port = free_port()
    log = tmp_path / "stderr.log"
    url = f"http://127.0.0.1:{port}/slack/events"

    async def send(event: dict[str, object]) -> None:
        body = json.dumps(envelope(event))
        async with aiohttp.ClientSession() as http:
            for _ in range(500):
                try:
                    async with http.post(
                        url, data=body, headers={**sign(body), "Content-Type": "application/json"}
                    ) as r:
                        assert r.status == 200
                        return
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.02)
        pytest.fail(f"the bot never listened: {log.read_text(encoding='utf-8')}")

    def card_says(text: str) -> bool:
        return any(text in json.dumps(m, ensure_ascii=False) for m in api.messages.values())

    def ties_shown() -> int:
        return sum(
            "It's a tie" in json.dumps(c.args, ensure_ascii=False)
            for c in api.calls
            if c.method in ("chat.postMessage", "chat.update")  # a card may be posted already open
        )

    first = rostra_slack(env, log, port)
    try:
        await send(mention_event("debate Should cities ban cars? human_window=5"))
        await api.wait_until(lambda: ties_shown() > 0 and bool(api.calls_to("reactions.add")), within=30)
        (opening,) = api.top_level(CHANNEL)
        card = api.calls_to("reactions.add")[0].args["timestamp"]
        api.react(CHANNEL, card, "x", "UALICE")
        await send(reaction_event(True, "UALICE", "x", card))
        await api.wait_until(lambda: card_says("❌ Replace 1"), within=10)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        status = conn.execute("SELECT status FROM debates").fetchone()[0]
    assert status == "running"  # a kill leaves no chance to say goodbye
    api.react(CHANNEL, card, "x", "UCAROL")  # while Rostra is down
    tied = ties_shown()

    second = rostra_slack(env, log, port)
    try:
        await api.wait_until(lambda: ties_shown() > tied, within=30)  # the same card, open again
        api.react(CHANNEL, card, "x", "UBOB")
        await send(reaction_event(True, "UBOB", "x", card))
        await api.wait_until(lambda: card_says("❌ Replace 3"), within=10)

        def thread() -> list[dict[str, Any]]:
            return api.thread(CHANNEL, opening["ts"])

        await api.wait_until(lambda: thread()[-1]["text"].startswith("The end"), within=40)
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=20) == 0, log.read_text(encoding="utf-8")

    assert [m["ts"] for m in api.top_level(CHANNEL)] == [opening["ts"]]
    assert [m["ts"] for m in thread() if m["text"].startswith("Vote: ")] == [card]
    assert "People: ✅ Keep 0 · ❌ Replace 3" in json.dumps(api.messages[(CHANNEL, card)], ensure_ascii=False)
    posted = [(m.get("username"), m["text"]) for m in api.posted]
    assert len(posted) == len(set(posted))
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT status FROM debates").fetchone()[0] == "completed"
        cast = [json.loads(p) for (p,) in conn.execute("SELECT payload FROM events WHERE kind = 'vote_cast'")]
    humans = [vote["voter"]["id"] for vote in cast if vote["voter"]["human"]]
    assert sorted(humans) == ["UALICE", "UBOB", "UCAROL"]


async def _rostra_slack(tmp_path: Path, api: FakeSlack, **tokens: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "SLACK_"))}
    env.update(
        {
            "ROSTRA_CONFIG": str(REPO / "config.yaml"),
            "ROSTRA_STORAGE__URL": f"sqlite:///{tmp_path / 'rostra.db'}",
            "ROSTRA_SLACK__API_URL": api.base_url,
            "ROSTRA_MODEL__DEFAULT": "scripted",
            **tokens,
        }
    )
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "slack", cwd=REPO, env=env, stderr=asyncio.subprocess.PIPE
    )


@pytest.mark.parametrize(
    ("which", "error"),
    [
        ("SLACK_BOT_TOKEN", "invalid_auth"),
        ("SLACK_APP_TOKEN", "invalid_auth"),
        ("SLACK_BOT_TOKEN", "token_revoked"),
    ],
)
async def test_rostra_slack_with_a_bad_token_says_so_and_exits_promptly(
    tmp_path: Path, api: FakeSlack, which: str, error: str
) -> None:
    method = "auth.test" if which == "SLACK_BOT_TOKEN" else "apps.connections.open"
    api.fail_next(method, status=200, error=error)
    proc = await _rostra_slack(tmp_path, api, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN)
    assert proc.stderr is not None
    err = await asyncio.wait_for(proc.stderr.read(), 20)
    code = await asyncio.wait_for(proc.wait(), 5)
    assert code == 2
    assert err.decode().strip().splitlines() == [f"rostra: Slack refused {which} ({error}); check the token."]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
async def test_rostra_slack_stops_on_a_signal_even_while_it_cannot_connect(
    tmp_path: Path, api: FakeSlack, sig: signal.Signals
) -> None:
    api.refuse_sockets = True  # the WebSocket never opens: slack_sdk keeps trying to connect
    proc = await _rostra_slack(tmp_path, api, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN)
    assert proc.stderr is not None
    line = await asyncio.wait_for(proc.stderr.readline(), 20)
    assert line.decode().startswith("rostra: serving Rostra Test in Slack (Socket Mode)")
    await api.wait_until(lambda: len(api.calls_to("apps.connections.open")) >= 1)
    await asyncio.sleep(0.5)
    proc.send_signal(sig)
    code = await asyncio.wait_for(proc.wait(), 10)
    assert code == 0
    rest = (await proc.stderr.read()).decode()
    assert rest.strip().splitlines()[-1:] == [BOT_STOPPED]  # one line at the end
    assert "KeyboardInterrupt" not in rest and "CancelledError" not in rest


async def test_a_token_that_is_not_a_bot_token_is_named_before_anything_else(
    tmp_path: Path, api: FakeSlack
) -> None:
    proc = await _rostra_slack(tmp_path, api, SLACK_BOT_TOKEN="garbage")  # and no signing secret
    assert proc.stderr is not None
    err = (await asyncio.wait_for(proc.stderr.read(), 20)).decode()
    assert await asyncio.wait_for(proc.wait(), 5) == 2
    assert "SLACK_BOT_TOKEN is not a bot token" in err and "SIGNING_SECRET" not in err


async def test_rostra_slack_checks_the_model_key_at_start_up(tmp_path: Path, api: FakeSlack) -> None:
    proc = await _rostra_slack(
        tmp_path,
        api,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_APP_TOKEN=APP_TOKEN,
        ROSTRA_MODEL__DEFAULT="anthropic:claude-x",
    )
    assert proc.stderr is not None
    err = (await asyncio.wait_for(proc.stderr.read(), 20)).decode()
    assert await asyncio.wait_for(proc.wait(), 5) == 2
    [line] = err.strip().splitlines()
    assert "needs ANTHROPIC_API_KEY" in line and "model.default: scripted" in line
    assert api.calls == []  # refused before anything reached Slack


async def test_an_unreachable_slack_reads_cannot_reach(tmp_path: Path) -> None:
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "SLACK_"))}
    env.update(
        ROSTRA_CONFIG=str(REPO / "config.yaml"),
        ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}",
        ROSTRA_SLACK__API_URL=f"http://127.0.0.1:{port}/api/",
        ROSTRA_MODEL__DEFAULT="scripted",
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET="s" * 32,
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "slack",
        "--http",
        "--port",
        "1",
        cwd=REPO,
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    err = (await asyncio.wait_for(proc.stderr.read(), 60)).decode()
    assert await asyncio.wait_for(proc.wait(), 5) == 1
    assert "cannot reach Slack" in err and "cannot serve" not in err and "Traceback" not in err
