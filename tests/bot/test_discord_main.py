"""`rostra discord` and `rostra discord-invite`: clear one-line errors, the exact invite URL."""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import discord
import pytest

from bot.discord_main import add_discord_commands, application_id_from_token
from bot.errors import UsageError
from bot.exits import BOT_STOPPED
from testkit.discord_rest import FakeDiscordREST
from tests.helpers import CONFIG_PATH, REPO

APP_ID = 1456074443980800000
EXPECTED = discord.Permissions(
    view_channel=True,
    send_messages=True,
    create_public_threads=True,
    send_messages_in_threads=True,
    embed_links=True,
    attach_files=True,
    add_reactions=True,
    read_message_history=True,
    manage_threads=True,  # to delete a thread whose debate could not start
    manage_webhooks=True,
)


def run(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="rostra")
    parser.add_argument("--config")
    add_discord_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["--config", str(CONFIG_PATH), *argv])
    code: int = args.handler(args)
    return code


def _token(app_id: int) -> str:
    head = base64.urlsafe_b64encode(str(app_id).encode()).decode().rstrip("=")
    return f"{head}.GhXyZw.not-a-real-secret"


def test_discord_without_a_token_says_how_to_get_one() -> None:
    with pytest.raises(UsageError, match=r"^DISCORD_TOKEN is not set: create an application at https://"):
        run(["discord"])


def test_discord_checks_the_models_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", _token(APP_ID))  # the shipped config wants Claude, and no key is set
    with pytest.raises(UsageError, match="needs ANTHROPIC_API_KEY"):
        run(["discord"])


def test_invite_asks_for_exactly_the_permissions_needed(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["discord-invite", "--client-id", str(APP_ID)]) == 0

    url = urlparse(capsys.readouterr().out.strip())
    query = parse_qs(url.query)
    assert (url.netloc, url.path) == ("discord.com", "/oauth2/authorize")
    assert query["client_id"] == [str(APP_ID)]
    assert query["scope"] == ["bot applications.commands"]
    assert discord.Permissions(int(query["permissions"][0])) == EXPECTED


def test_invite_reads_the_application_id_from_the_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", _token(APP_ID))
    assert run(["discord-invite"]) == 0
    assert f"client_id={APP_ID}" in capsys.readouterr().out
    assert application_id_from_token("garbage!!") is None


def test_invite_without_any_application_id_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="pass --client-id"):
        run(["discord-invite"])


def test_a_bad_client_id_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run(["discord-invite", "--client-id", "abc"])
    assert exit_info.value.code == 2
    assert "--client-id must be a number" in capsys.readouterr().err


def test_importing_the_discord_pieces_does_not_load_discord_py() -> None:
    code = "import sys, bot.config, bot.discord_main, adapters.discord;print('discord' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False"


async def _rostra_discord(api: FakeDiscordREST, tmp_path: Path) -> asyncio.subprocess.Process:
    """`rostra discord` as a process against the loopback Discord (`discord.api_url`, `gateway_url`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROSTRA_", "DISCORD_", "ANTHROPIC_"))}
    env.update(
        ROSTRA_CONFIG=str(CONFIG_PATH),
        ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}",
        ROSTRA_MODEL__DEFAULT="scripted",
        ROSTRA_DISCORD__API_URL=api.base,
        ROSTRA_DISCORD__GATEWAY_URL=api.gateway_url,
        DISCORD_TOKEN=_token(APP_ID),
    )
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "discord", cwd=REPO, env=env, stderr=asyncio.subprocess.PIPE
    )


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_rostra_discord_stops_on_a_signal_with_one_line(tmp_path: Path, sig: signal.Signals) -> None:
    """`rostra discord` as a process against the loopback Discord (`discord.api_url`, `gateway_url`),
    connected and identified: SIGTERM or Ctrl+C ends it with its one stop line and exit 0."""
    async with FakeDiscordREST() as api:
        proc = await _rostra_discord(api, tmp_path)
        assert proc.stderr is not None
        line = await asyncio.wait_for(proc.stderr.readline(), 30)
        assert line.decode().startswith("rostra: connecting to Discord"), line  # nothing before it
        await api.wait_until(lambda: bool(api.identified), within=30)
        assert api.identified[0]["d"]["token"] == _token(APP_ID)  # the gateway it was pointed at
        proc.send_signal(sig)
        code = await asyncio.wait_for(proc.wait(), 20)
        rest = (await proc.stderr.read()).decode()
    assert code == 0, rest
    assert rest.strip().splitlines()[-1:] == [BOT_STOPPED]  # one line at the end
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest and "CancelledError" not in rest


@pytest.mark.slow
async def test_discord_failing_as_the_bot_logs_in_ends_with_one_line_saying_so(tmp_path: Path) -> None:
    """Discord answers 502 to the login (`GET /users/@me`) past discord.py's five tries (25 s): one
    line says Discord isn't answering, exit 1 (starting again later helps); no traceback, and not
    the line for a token Discord rejected."""
    async with FakeDiscordREST() as api:
        api.fail("GET", r"/users/@me", status=502, for_seconds=60)
        proc = await _rostra_discord(api, tmp_path)
        assert proc.stderr is not None
        code = await asyncio.wait_for(proc.wait(), 60)
        said = (await proc.stderr.read()).decode().strip().splitlines()
    assert code == 1, said
    assert said[0] == "rostra: connecting to Discord; Ctrl+C stops"
    assert said[-1] == (
        "rostra: Discord isn't answering right now (502 Bad Gateway (error code: 0): Bad Gateway);"
        " try again later."
    )
    assert not any("Traceback" in line or "rejected DISCORD_TOKEN" in line for line in said)
