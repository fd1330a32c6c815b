"""`rostra discord` runs the Discord bot; `rostra discord-invite` prints the URL that adds it to a
server with exactly the permissions it needs. Bad input prints one line and exits 2.

discord.py is imported only when one of these commands runs, so the rest of the CLI stays fast.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import contextlib
import logging
import signal
import sys
from typing import TYPE_CHECKING, Any

from bot.errors import UsageError
from bot.exits import BOT_STOPPED
from bot.gctune import tune_gc
from bot.startup import check_models, unreachable, warm_pictures

if TYPE_CHECKING:
    from pydantic import SecretStr

    from bot.config import Config, Secrets
    from bot.runtime import Runtime

log = logging.getLogger(__name__)

EXIT_FAILED = 1

TOKEN_HELP = (
    "DISCORD_TOKEN is not set: create an application at https://discord.com/developers/applications,"
    " add a bot, copy its token and export DISCORD_TOKEN=…; see docs/discord.md"
)


def add_discord_commands(subparsers: Any) -> None:
    """Register `rostra discord` and `rostra discord-invite` on the CLI's subparsers."""
    run: argparse.ArgumentParser = subparsers.add_parser(
        "discord",
        help="run the Discord bot (token from DISCORD_TOKEN)",
        description="Run Rostra in Discord: sync the /debate commands (globally, or to"
        " discord.dev_guild_id for instant updates) and serve until stopped. Logs go to stderr.",
    )
    run.set_defaults(handler=run_discord)
    invite: argparse.ArgumentParser = subparsers.add_parser(
        "discord-invite",
        help="print the URL that invites the Discord bot to a server",
        description="Print the OAuth2 URL that adds Rostra to a server with exactly the permissions it"
        " needs (see docs/discord.md for why each one).",
    )
    invite.add_argument(
        "--client-id",
        type=_snowflake,
        help="the Application ID (default: discord.application_id, else read from DISCORD_TOKEN)",
    )
    invite.set_defaults(handler=print_invite)


def _snowflake(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"--client-id must be a number (the Application ID), not {text!r}")
    return int(text)


def _secret(value: SecretStr | None) -> str | None:
    text = value.get_secret_value().strip() if value is not None else ""
    return text or None


def _load(args: argparse.Namespace) -> Config:
    from bot.config import ConfigError, load_config

    try:
        return load_config(getattr(args, "config", None))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


# --- rostra discord -------------------------------------------------------------------------------


def run_discord(args: argparse.Namespace) -> int:
    from bot.config import load_secrets
    from bot.logging import setup_logging

    config = _load(args)
    secrets = load_secrets()
    token = _secret(secrets.discord_token)
    if token is None:
        raise UsageError(TOKEN_HELP)
    runtime = prepared_runtime(config, secrets)
    setup_logging(
        config.logging.level,
        secrets=secrets.values(),
        verbose=config.logging.verbose,
        fmt=config.logging.format,
    )
    try:
        return asyncio.run(serve(runtime, token))
    except KeyboardInterrupt:
        return 0


def prepared_runtime(config: Config, secrets: Secrets) -> Runtime:
    """The runtime, with every format's models checked now (a missing key fails at startup)."""
    from bot.runtime import Runtime

    runtime = Runtime(config, secrets=secrets)
    check_models(config, secrets, runtime.models)
    return runtime


async def serve(runtime: Runtime, token: str, *, stop: asyncio.Event | None = None) -> int:
    """Run the bot until `stop` is set (by default: on SIGTERM; Ctrl+C also ends it)."""
    import aiohttp
    import discord
    import yarl

    from adapters.discord import create_bot
    from bot.operations import watch_platform

    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):  # a clean stop: debates stay resumable
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    settings = runtime.config.discord
    if settings.api_url:  # a proxy's (or a test's) Discord
        discord.http.Route.BASE = settings.api_url.rstrip("/")
    if settings.gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.gateway_url)
    async with runtime as rt:
        rt.enable_failover()
        await warm_pictures(rt.config.results.picture)
        await rt.join_workers("discord")  # bot-wide rate budgets split by the live workers
        tune_gc(rt.config.runtime.gc)
        bot = create_bot(rt)
        watch_platform(rt, "discord", lambda: bot.is_ready() and not bot.is_closed())  # for /readyz
        async with bot:
            closer = asyncio.create_task(_close_when(stop, bot), name="rostra-discord-stop")
            try:
                print("rostra: connecting to Discord; Ctrl+C stops", file=sys.stderr)
                await bot.start(token)
            except discord.LoginFailure as exc:
                raise UsageError(f"Discord rejected DISCORD_TOKEN ({exc}); copy the token again") from None
            except (OSError, aiohttp.ClientError) as exc:
                print(f"rostra: {unreachable('Discord', exc)}", file=sys.stderr)
                return EXIT_FAILED
            except discord.DiscordServerError as exc:  # 5xx past discord.py's five tries: not the token
                print(
                    f"rostra: Discord isn't answering right now ({exc}); try again later.",
                    file=sys.stderr,
                )
                return EXIT_FAILED
            finally:
                if not stop.is_set():
                    closer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await closer  # a stop asked for: the bot's close runs to its end
    if stop.is_set():
        print(BOT_STOPPED, file=sys.stderr)
    return 0


async def _close_when(stop: asyncio.Event, bot: Any) -> None:
    await stop.wait()
    log.info("stopping: closing the Discord connection")
    await bot.close()


# --- rostra discord-invite ------------------------------------------------------------------------


def application_id_from_token(token: str) -> int | None:
    """A bot token starts with its user id (the application id) in base64."""
    head = token.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return int(decoded) if decoded.isdigit() else None


def print_invite(args: argparse.Namespace) -> int:
    from adapters.discord.install.invite import invite_url
    from bot.config import load_secrets

    client_id: int | None = args.client_id
    if client_id is None:
        client_id = _load(args).discord.application_id
    if client_id is None:
        token = _secret(load_secrets().discord_token)
        client_id = application_id_from_token(token) if token else None
    if client_id is None:
        raise UsageError(
            "no application id: pass --client-id (the Application ID on the Developer Portal), set"
            " discord.application_id in config.yaml, or set DISCORD_TOKEN"
        )
    print(invite_url(client_id))
    return 0
