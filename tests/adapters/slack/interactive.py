"""Interaction payloads as Slack sends them (form-encoded `payload=<json>`, signed), for the harness."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from aiohttp import ClientResponse

from testkit.slack_api import TEAM
from tests.adapters.slack.conftest import CHANNEL, Harness


async def interact(slack: Harness, payload: dict[str, Any]) -> ClientResponse:
    body = urlencode({"payload": json.dumps(payload)})
    return await slack.post(body, "application/x-www-form-urlencoded")


def _user(user: str) -> dict[str, Any]:
    return {"id": user, "username": user.lower(), "team_id": TEAM}


async def slash_alone(
    slack: Harness, user: str, *, channel: str = CHANNEL, trigger_id: str | None = None
) -> int:
    """`/debate` with no text; the status Slack got back."""
    fields = {
        "token": "legacy",
        "team_id": TEAM,
        "team_domain": "rostra-test",
        "channel_id": channel,
        "channel_name": "debates",
        "user_id": user,
        "user_name": user.lower(),
        "command": "/debate",
        "text": "",
        "api_app_id": "A0001",
        "response_url": f"{slack.api.root}/respond/{user}",
        "trigger_id": trigger_id or slack.api.trigger(user),
    }
    response = await slack.post(urlencode(fields), "application/x-www-form-urlencoded")
    return response.status


async def message_shortcut(slack: Harness, user: str, text: str, *, channel: str = CHANNEL) -> int:
    payload = {
        "type": "message_action",
        "callback_id": "rostra_debate_message",
        "trigger_id": slack.api.trigger(user),
        "team": {"id": TEAM, "domain": "rostra-test"},
        "channel": {"id": channel, "name": "debates"},
        "user": _user(user),
        "message_ts": "1700000000.000100",
        "message": {"type": "message", "user": "UERIN", "ts": "1700000000.000100", "text": text},
        "response_url": f"{slack.api.root}/respond/{user}",
        "token": "legacy",
        "api_app_id": "A0001",
    }
    return (await interact(slack, payload)).status


def block_actions(
    slack: Harness,
    user: str,
    action: dict[str, Any],
    *,
    view: dict[str, Any] | None = None,
    message: dict[str, Any] | None = None,
    channel: str = CHANNEL,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "type": "block_actions",
        "trigger_id": slack.api.trigger(user),
        "team": {"id": TEAM, "domain": "rostra-test"},
        "user": _user(user),
        "api_app_id": "A0001",
        "token": "legacy",
        "actions": [{"action_ts": "1700000001.000200", **action}],
    }
    if view is not None:
        payload["view"] = view
        payload["container"] = {"type": "view", "view_id": view["id"]}
    if message is not None:
        payload["message"] = message
        payload["channel"] = {"id": channel, "name": "debates"}
        payload["container"] = {
            "type": "message",
            "message_ts": message["ts"],
            "channel_id": channel,
            "is_ephemeral": False,
        }
        payload["response_url"] = f"{slack.api.root}/respond/{user}"
    return payload


async def submit(slack: Harness, user: str, view_id: str, values: dict[str, Any]) -> ClientResponse:
    view = slack.api.submission_state(view_id, values)
    payload = {
        "type": "view_submission",
        "team": {"id": TEAM, "domain": "rostra-test"},
        "user": _user(user),
        "api_app_id": "A0001",
        "token": "legacy",
        "trigger_id": slack.api.trigger(user),
        "view": view,
    }
    return await interact(slack, payload)
