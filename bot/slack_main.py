"""`rostra slack`: run the Slack bot. Socket Mode when SLACK_APP_TOKEN is set, else an HTTP server
(signing-secret verification) on `slack.http_port`. Missing tokens print one line and exit 2.

Once it is connected (or listening), it picks up the Slack debates a restart cut short, each in its
own thread (`resume: on` in config; with `off` their threads are told and closed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.errors import UsageError
from bot.exits import BOT_STOPPED
from bot.gctune import tune_gc
from bot.startup import EXIT_CONFIG, check_models, unreachable, warm_pictures
from core.ports import Installations

if TYPE_CHECKING:
    from pydantic import SecretStr

    from adapters.slack.install.installations import OAuthStores
    from adapters.slack.install.sealing import Sealer
    from adapters.slack.settings import SlackSettings
    from bot.config import Config, Secrets
    from core.clock import Clock
    from core.ports import Store

EXIT_FAILED = 1
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mode:
    """How to reach Slack: over a Socket Mode WebSocket (with the app token) or as an HTTP server."""

    socket: bool
    app_token: str | None = None
    host: str = "0.0.0.0"
    port: int = 3000

    def describe(self) -> str:
        return "Socket Mode" if self.socket else f"HTTP on {self.host}:{self.port}/slack/events"


def add_slack_commands(subparsers: Any) -> None:
    """Register `rostra slack` on the CLI's subparsers (handler: `run_slack`)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "slack",
        help="run the Slack bot (Socket Mode with SLACK_APP_TOKEN, else an HTTP server)",
        description="Run Rostra in Slack. Needs SLACK_BOT_TOKEN, and SLACK_APP_TOKEN (Socket Mode) or"
        " SLACK_SIGNING_SECRET (HTTP mode). Install the app from slack-manifest.yaml first.",
    )
    parser.add_argument("--http", action="store_true", help="serve HTTP even when SLACK_APP_TOKEN is set")
    parser.add_argument("--port", type=_port, help="HTTP mode port (default: slack.http_port)")
    parser.add_argument("--host", help="HTTP mode address (default: slack.http_host)")
    parser.set_defaults(handler=run_slack)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--port must be a whole number, not {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"--port must be between 1 and 65535 (got {value})")
    return value


def choose_mode(
    secrets: Secrets, settings: SlackSettings, *, force_http: bool, host: str | None, port: int | None
) -> Mode:
    """Socket Mode or HTTP from the tokens present. Raises UsageError naming what is missing."""

    def value(secret: SecretStr | None) -> str | None:
        text = secret.get_secret_value().strip() if secret is not None else ""
        return text or None

    if value(secrets.slack_client_id) and value(secrets.slack_client_secret):
        # many workspaces (OAuth install): HTTP only, tokens come from installs (docs/slack.md)
        if value(secrets.slack_signing_secret) is None:
            raise UsageError("SLACK_SIGNING_SECRET is not set: HTTP mode needs it; see docs/slack.md")
        sealer(secrets)  # the installations' tokens are sealed at rest: no key, no start
        return Mode(socket=False, host=host or settings.http_host, port=port or settings.http_port)
    bot_token = value(secrets.slack_bot_token)
    if bot_token is None:
        raise UsageError(
            "SLACK_BOT_TOKEN is not set: install the app from slack-manifest.yaml and export its"
            " Bot User OAuth Token (xoxb-…); see docs/slack.md"
        )
    if not bot_token.startswith("xoxb-"):
        raise UsageError(
            "SLACK_BOT_TOKEN is not a bot token (it starts with xoxb-): copy the Bot User OAuth Token"
            " from the app's OAuth & Permissions page; see docs/slack.md"
        )
    app_token = value(secrets.slack_app_token)
    if app_token is not None and not force_http:
        if not app_token.startswith("xapp-"):
            raise UsageError("SLACK_APP_TOKEN must be an app-level token (it starts with xapp-)")
        return Mode(socket=True, app_token=app_token)
    if value(secrets.slack_signing_secret) is None:
        raise UsageError(
            "SLACK_SIGNING_SECRET is not set: HTTP mode needs it to verify Slack's requests (or set"
            " SLACK_APP_TOKEN for Socket Mode); see docs/slack.md"
        )
    return Mode(socket=False, host=host or settings.http_host, port=port or settings.http_port)


def run_slack(args: argparse.Namespace) -> int:
    from bot.config import ConfigError, load_config, load_secrets
    from bot.logging import setup_logging

    try:
        config = load_config(getattr(args, "config", None))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    secrets = load_secrets()
    mode = choose_mode(secrets, config.slack, force_http=args.http, host=args.host, port=args.port)
    check_models(config, secrets)
    setup_logging(
        config.logging.level,
        secrets=secrets.values(),
        verbose=config.logging.verbose,
        fmt=config.logging.format,
    )
    try:
        return asyncio.run(serve(config, secrets, mode))
    except KeyboardInterrupt:
        return 0


async def serve(
    config: Config,
    secrets: Secrets,
    mode: Mode,
    *,
    stop: asyncio.Event | None = None,
    clock: Clock | None = None,
) -> int:
    """Run until `stop` is set (by default: on SIGINT or SIGTERM). Returns the exit code."""
    from adapters.slack import create_app
    from adapters.slack.errors import SlackConfigError, SlackUnavailable
    from adapters.slack.serve import check_app_token, check_token, run_http, run_socket_mode
    from bot.operations import watch_platform
    from bot.runtime import Runtime

    if stop is None:
        stop = asyncio.Event()
        _on_signals(stop)
    # Bolt reads SLACK_BOT_TOKEN itself and warns that the client we give it makes it unused: noise.
    logging.getLogger("slack_bolt.AsyncApp").addFilter(_not_the_unused_token_warning)
    async with Runtime(config, secrets=secrets, clock=clock) as rt:
        rt.enable_failover()
        await warm_pictures(rt.config.results.picture)
        await rt.join_workers("slack")  # bot-wide rate budgets split by the live workers
        stores = oauth_stores(rt.store, secrets)
        tune_gc(config.runtime.gc)
        try:
            app = create_app(rt, socket_mode=mode.socket, oauth_stores=stores)
        except SlackConfigError as exc:
            return _fail(str(exc))

        async def resume() -> None:
            try:
                await app.resume_debates()
            except Exception:  # the bot still serves new debates
                log.exception("could not resume the Slack debates a restart cut short")

        try:
            try:
                team = await check_token(app) if stores is None else "every workspace that installs Rostra"
                url = await check_app_token(app, mode.app_token) if mode.socket and mode.app_token else None
            except SlackConfigError as exc:  # a token Slack refuses: a configuration error
                return _fail(str(exc), EXIT_CONFIG)
            except SlackUnavailable as exc:  # Slack failing as we start: starting again later helps
                return _fail(f"{exc} ({exc.detail})")
            except OSError as exc:  # aiohttp's connection errors are OSErrors
                return _fail(unreachable("Slack (slack.com)", exc))
            watch_platform(rt, "slack", lambda: not stop.is_set())  # for /readyz: token accepted, serving
            print(f"rostra: serving {team} in Slack ({mode.describe()}); Ctrl+C stops", file=sys.stderr)
            if mode.socket:
                assert mode.app_token is not None
                await run_socket_mode(app, mode.app_token, stop, ready=resume, url=url)
            else:
                await run_http(app, host=mode.host, port=mode.port, stop=stop, ready=resume)
        except SlackConfigError as exc:
            return _fail(str(exc))
        except OSError as exc:
            return _fail(f"cannot serve {mode.describe()}: {exc.strerror or exc}")
        finally:
            await app.aclose()
    if stop.is_set():
        print(BOT_STOPPED, file=sys.stderr)
    return 0


def _not_the_unused_token_warning(record: logging.LogRecord) -> bool:
    return "`token` will be unused" not in record.getMessage()


def oauth_stores(store: Store, secrets: Secrets) -> OAuthStores | None:
    """The installation and OAuth-state stores when serving many workspaces, in Rostra's store:
    the SQLite file, or the Postgres database that every worker shares."""
    from adapters.slack.install.installations import OAuthStores

    if secrets.slack_client_id is None or secrets.slack_client_secret is None:
        return None
    if not isinstance(store, Installations):
        raise UsageError(
            "this store keeps no installations: serving many workspaces needs SQLite or Postgres"
        )
    return OAuthStores(store, sealer(secrets))


def sealer(secrets: Secrets) -> Sealer:
    """The keys that seal the workspaces' stored tokens (ROSTRA_SECRET_KEY). Raises UsageError, in
    one line saying how to make a key, when it is unset or not a Fernet key."""
    from adapters.slack.install.sealing import Sealer, SecretKeyError

    key = secrets.rostra_secret_key
    try:
        return Sealer(key.get_secret_value() if key is not None else "")
    except SecretKeyError as exc:
        raise UsageError(str(exc)) from None


def _on_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)


def _fail(message: str, code: int = EXIT_FAILED) -> int:
    print(f"rostra: {message}", file=sys.stderr)
    return code
