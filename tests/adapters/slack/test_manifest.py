"""slack-manifest.yaml asks for exactly what the code uses."""

import subprocess
import sys

import yaml

from adapters.slack.inbound.modal.handlers import SHORTCUT_CALLBACK
from adapters.slack.install.scopes import BOT_EVENTS, BOT_SCOPES, SLASH_COMMAND
from tests.helpers import REPO


def test_manifest_lists_exactly_the_scopes_events_and_command_used() -> None:
    manifest = yaml.safe_load((REPO / "slack-manifest.yaml").read_text(encoding="utf-8"))
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == BOT_SCOPES
    assert set(manifest["settings"]["event_subscriptions"]["bot_events"]) == BOT_EVENTS
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == [SLASH_COMMAND]
    assert manifest["settings"]["interactivity"]["is_enabled"] is True  # the Start modal, card buttons
    assert [s["callback_id"] for s in manifest["features"]["shortcuts"]] == [SHORTCUT_CALLBACK]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert manifest["settings"]["socket_mode_enabled"] is True


def test_importing_the_package_does_not_load_bolt() -> None:
    code = (
        "import sys, adapters.slack, bot.config; "
        "assert callable(adapters.slack.create_app); "
        "print(sorted(m for m in sys.modules if m.startswith('slack_bolt')))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
