"""`rostra init [DIR]`: an editable config.yaml and a `.env` template, for people who installed the package.

A source checkout has both files at hand; an installed wheel has only its packaged copy of the
config, out of sight in site-packages. `init` copies it out, and writes the secrets template (the
same text as the repository's `.env.example`), so the first edit is a file in a folder of the
user's choice. Existing files are never overwritten unless asked (`--force`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

ENV_TEMPLATE = """\
# Secrets come only from the environment. Copy this file to .env, fill in what you use, then
#   set -a; . ./.env; set +a        (or: docker run --env-file .env ...)
# Nothing here is needed for `rostra demo`: without ANTHROPIC_API_KEY it runs offline.

# Claude (https://console.anthropic.com). Without it, debates use the offline scripted rehearsal.
ANTHROPIC_API_KEY=

# Optional web research for the oxford format's debaters (also set formats.oxford.research.enabled).
TAVILY_API_KEY=

# Discord (rostra discord): the bot token from the Developer Portal's Bot page.
DISCORD_TOKEN=

# Slack (rostra slack): bot token, signing secret (HTTP mode), app-level token (Socket Mode).
SLACK_BOT_TOKEN=
SLACK_SIGNING_SECRET=
SLACK_APP_TOKEN=

# Slack, many workspaces (OAuth install at /slack/install, HTTP mode): the app's Basic Information.
SLACK_CLIENT_ID=
SLACK_CLIENT_SECRET=
# Seals the workspaces' stored tokens (required with the two above). Make one with
#   python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"
# Several keys comma-separated rotate them: the first seals, all open.
ROSTRA_SECRET_KEY=

# Any config.yaml key can be overridden as ROSTRA_<SECTION>__<KEY>, for example:
# ROSTRA_MODEL__DEFAULT=scripted
# ROSTRA_FORMATS__ARENA__DURATION=120
# ROSTRA_STORAGE__URL=sqlite:////var/lib/rostra/rostra.db   (four slashes: an absolute path)
"""


class InitError(Exception):
    """The folder cannot be written as asked; the message says why."""


def packaged_config() -> Path:
    """The default config.yaml: the repository's in a checkout, the wheel's packaged copy otherwise."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "config.yaml", here / "default_config.yaml"):
        if candidate.is_file():
            return candidate
    raise InitError("the packaged config.yaml is missing from this installation; reinstall rostra")


def write_starter_files(folder: Path, *, force: bool = False) -> list[Path]:
    """Write `config.yaml` and `.env` into `folder` (created if missing); the paths written."""
    if folder.exists() and not folder.is_dir():
        raise InitError(f"{folder} is not a folder")
    targets = {
        folder / "config.yaml": packaged_config().read_text(encoding="utf-8"),
        folder / ".env": ENV_TEMPLATE,
    }
    present = [path.name for path in targets if path.exists() or path.is_symlink()]
    if present and not force:
        raise InitError(f"{folder} already has {' and '.join(present)}; add --force to overwrite")
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in targets.items():
        if path.is_symlink():
            path.unlink()  # never write through a link to somewhere else
        path.write_text(text, encoding="utf-8")
    os.chmod(folder / ".env", 0o600)  # it is for secrets
    return list(targets)


def add_init_command(subparsers: Any) -> None:
    """Register `rostra init` on the CLI's subparsers."""
    init: argparse.ArgumentParser = subparsers.add_parser(
        "init",
        help="write an editable config.yaml and a .env template into a folder",
        description="Write config.yaml (the defaults, with comments) and .env (the secrets, empty) into"
        " FOLDER, for editing. Run rostra from that folder, or point ROSTRA_CONFIG at its config.yaml.",
    )
    init.add_argument("folder", nargs="?", default=".", metavar="FOLDER", help="where (default: here)")
    init.add_argument("--force", action="store_true", help="overwrite files that are already there")
    init.set_defaults(handler=run_init)


def run_init(args: argparse.Namespace) -> int:
    from bot.errors import UsageError

    folder = Path(args.folder).expanduser()
    try:
        written = write_starter_files(folder, force=args.force)
    except (InitError, OSError) as exc:
        raise UsageError(str(exc)) from None
    for path in written:
        print(f"wrote {path}")
    config = (folder / "config.yaml").resolve()
    print(
        f"Next: edit {config}, fill in {folder / '.env'} and load it (set -a; . {folder / '.env'}; set +a),"
        f" then run rostra from {folder.resolve()} or with ROSTRA_CONFIG={config}."
    )
    return 0
