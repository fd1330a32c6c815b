"""The fake Slack's modals and App Home: `views.open`, `views.update`, `views.publish`, as strict as
Slack documents them, and the payloads Slack sends when a person works a modal or a button.

- A trigger id comes from an interaction (`trigger()` here); it can open one view, once, within 3 s
  (`invalid_trigger_id`, `exchanged_trigger_id`, `expired_trigger_id`).
- A view is checked like Slack checks it (`invalid_arguments` with `response_metadata.messages`):
  type, title and button lengths, 100 blocks, unique block ids, input labels, select options and
  initial options, private_metadata ≤ 3000 characters, callback_id ≤ 255.
- `views.update` needs `view_id` (or `external_id`) of an open view; a stale `hash` is `hash_conflict`.
- `views.publish` needs a `user_id` and a `home` view.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

TRIGGER_SECONDS = 3.0
TITLE_LIMIT = 24
MAX_VIEW_BLOCKS = 100
METADATA_LIMIT = 3000
CALLBACK_LIMIT = 255
LABEL_LIMIT = 2000
OPTION_TEXT_LIMIT = 75
MAX_OPTIONS = 100


@dataclass
class OpenView:
    id: str
    view: dict[str, Any]
    user: str
    hash: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


@dataclass
class ViewsState:
    triggers: dict[str, tuple[float, str, bool]] = field(default_factory=dict)  # id → (issued, user, used)
    open: dict[str, OpenView] = field(default_factory=dict)
    opened: list[OpenView] = field(default_factory=list)  # in the order they were opened
    homes: dict[str, dict[str, Any]] = field(default_factory=dict)  # user → published home view
    published: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def view_problems(view: Any, *, home: bool = False) -> list[str]:
    if isinstance(view, str):
        try:
            view = json.loads(view)
        except ValueError:
            return ["[ERROR] view is not JSON"]
    if not isinstance(view, dict):
        return ["[ERROR] missing required field: view"]
    problems: list[str] = []
    kind = view.get("type")
    if kind != ("home" if home else "modal"):
        problems.append(f"[ERROR] unsupported type: {kind!r} [json-pointer:/view/type]")
    texts = ("title", "submit", "close") if not home else ()
    for key in texts:
        value = view.get(key)
        if value is None:
            if key == "title":
                problems.append("[ERROR] missing required field: title [json-pointer:/view/title]")
            continue
        if value.get("type") != "plain_text":
            problems.append(f"[ERROR] must be plain_text [json-pointer:/view/{key}]")
        if len(value.get("text", "")) > TITLE_LIMIT:
            problems.append(
                f"[ERROR] must be less than {TITLE_LIMIT + 1} characters [json-pointer:/view/{key}]"
            )
    if len(str(view.get("private_metadata", ""))) > METADATA_LIMIT:
        problems.append("[ERROR] must be less than 3001 characters [json-pointer:/view/private_metadata]")
    if len(str(view.get("callback_id", ""))) > CALLBACK_LIMIT:
        problems.append("[ERROR] must be less than 256 characters [json-pointer:/view/callback_id]")
    blocks = view.get("blocks")
    if not isinstance(blocks, list):
        return [*problems, "[ERROR] missing required field: blocks [json-pointer:/view/blocks]"]
    if len(blocks) > MAX_VIEW_BLOCKS:
        problems.append("[ERROR] no more than 100 items allowed [json-pointer:/view/blocks]")
    seen: set[str] = set()
    has_input = False
    for i, block in enumerate(blocks):
        where = f"[json-pointer:/view/blocks/{i}]"
        block_id = block.get("block_id")
        if block_id is not None:
            if block_id in seen:
                problems.append(f"[ERROR] duplicate block_id {block_id!r} {where}")
            seen.add(block_id)
        if block.get("type") == "input":
            has_input = True
            label = block.get("label") or {}
            if label.get("type") != "plain_text" or not label.get("text"):
                problems.append(f"[ERROR] missing required field: label {where}")
            elif len(label["text"]) > LABEL_LIMIT:
                problems.append(f"[ERROR] label too long {where}")
            element = block.get("element")
            if not isinstance(element, dict):
                problems.append(f"[ERROR] missing required field: element {where}")
                continue
            problems += _element_problems(element, where)
        if block.get("type") == "actions":
            for element in block.get("elements", []):
                problems += _element_problems(element, where)
    if has_input and not home and view.get("submit") is None:
        problems.append("[ERROR] submit is required when an input block is present [json-pointer:/view]")
    return problems


def _element_problems(element: dict[str, Any], where: str) -> list[str]:
    problems: list[str] = []
    kind = element.get("type")
    if kind == "static_select":
        options = element.get("options") or []
        if not options or len(options) > MAX_OPTIONS:
            problems.append(f"[ERROR] options must hold 1 to 100 items {where}")
        for option in options:
            if len(option.get("text", {}).get("text", "")) > OPTION_TEXT_LIMIT:
                problems.append(f"[ERROR] option text too long {where}")
        initial = element.get("initial_option")
        if initial is not None and initial not in options:
            problems.append(f"[ERROR] initial_option must match one of the options {where}")
    if kind == "plain_text_input":
        initial = element.get("initial_value")
        limit = element.get("max_length", 3000)
        if isinstance(initial, str) and len(initial) > limit:
            problems.append(f"[ERROR] initial_value is longer than max_length {where}")
    if kind == "button":
        if len(element.get("text", {}).get("text", "")) > OPTION_TEXT_LIMIT:
            problems.append(f"[ERROR] button text too long {where}")
        if not element.get("action_id"):
            problems.append(f"[ERROR] missing action_id {where}")
    if kind == "file_input" and int(element.get("max_files", 10)) > 10:
        problems.append(f"[ERROR] max_files must be at most 10 {where}")
    return problems


def _view(a: dict[str, Any]) -> Any:
    view = a.get("view")
    if isinstance(view, str):
        try:
            return json.loads(view)
        except ValueError:
            return view
    return view


class SlackViews:
    """Mixed into FakeSlack (which answers `views.*` through `_views_open` and the like)."""

    def changed(self) -> None:  # pragma: no cover - FakeSlack's
        raise NotImplementedError

    @property
    def views(self) -> ViewsState:
        state = self.__dict__.get("_views_state")
        if state is None:
            state = self.__dict__["_views_state"] = ViewsState()
        return state

    def trigger(self, user: str) -> str:
        """A fresh trigger id, as Slack puts in a slash command, shortcut or button payload."""
        trigger_id = f"{int(time.time())}.{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex}"
        self.views.triggers[trigger_id] = (time.monotonic(), user, False)
        return trigger_id

    def age_trigger(self, trigger_id: str, seconds: float) -> None:
        issued, user, used = self.views.triggers[trigger_id]
        self.views.triggers[trigger_id] = (issued - seconds, user, used)

    def last_view(self) -> OpenView:
        return self.views.opened[-1]

    def _use_trigger(self, trigger_id: str) -> tuple[str | None, str | None]:
        found = self.views.triggers.get(trigger_id)
        if not trigger_id or found is None:
            return None, "invalid_trigger_id"
        issued, user, used = found
        if used:
            return None, "exchanged_trigger_id"
        if time.monotonic() - issued > TRIGGER_SECONDS:
            return None, "expired_trigger_id"
        self.views.triggers[trigger_id] = (issued, user, True)
        return user, None

    def _views_open(self, a: dict[str, Any]) -> dict[str, Any]:
        if not a.get("trigger_id") and not a.get("interactivity_pointer"):
            return {
                "ok": False,
                "error": "invalid_arguments",
                "response_metadata": {"messages": ["[ERROR] missing required field: trigger_id"]},
            }
        view = _view(a)
        problems = view_problems(view)
        if problems:
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems}}
        user, error = self._use_trigger(str(a.get("trigger_id") or ""))
        if error is not None or user is None:
            return {"ok": False, "error": error}
        opened = OpenView(id=f"V{uuid.uuid4().hex[:10].upper()}", view=view, user=user)
        self.views.open[opened.id] = opened
        self.views.opened.append(opened)
        self.changed()
        return {"ok": True, "view": self._view_json(opened)}

    def _views_update(self, a: dict[str, Any]) -> dict[str, Any]:
        view_id = a.get("view_id") or a.get("external_id")
        if not view_id:
            return {
                "ok": False,
                "error": "invalid_arguments",
                "response_metadata": {"messages": ["[ERROR] view_id or external_id is required"]},
            }
        opened = self.views.open.get(str(view_id))
        if opened is None:
            return {"ok": False, "error": "not_found"}
        if a.get("hash") and a["hash"] != opened.hash:
            return {"ok": False, "error": "hash_conflict"}
        view = _view(a)
        problems = view_problems(view)
        if problems:
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems}}
        opened.view = view
        opened.hash = uuid.uuid4().hex[:12]
        self.changed()
        return {"ok": True, "view": self._view_json(opened)}

    def _views_publish(self, a: dict[str, Any]) -> dict[str, Any]:
        user = a.get("user_id")
        if not user:
            return {
                "ok": False,
                "error": "invalid_arguments",
                "response_metadata": {"messages": ["[ERROR] missing required field: user_id"]},
            }
        view = _view(a)
        problems = view_problems(view, home=True)
        if problems:
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems}}
        self.views.homes[str(user)] = view
        self.views.published.append((str(user), view))
        self.changed()
        return {"ok": True, "view": {"id": f"V{uuid.uuid4().hex[:10].upper()}", **view}}

    def _view_json(self, opened: OpenView) -> dict[str, Any]:
        return {**opened.view, "id": opened.id, "hash": opened.hash, "state": {"values": {}}}

    def submission_state(self, view_id: str, values: dict[str, Any]) -> dict[str, Any]:
        """The `view` of a `view_submission` after a person filled in `values` (block id → value: text,
        a select's option value, a channel id, or a list of file objects)."""
        opened = self.views.open[view_id]
        state: dict[str, dict[str, Any]] = {}
        for block in opened.view["blocks"]:
            if block.get("type") != "input":
                continue
            element = block["element"]
            block_id, action_id, kind = block["block_id"], element["action_id"], element["type"]
            given = values.get(block_id)
            if kind == "static_select":
                chosen = (
                    element.get("initial_option")
                    if given is None
                    else next(o for o in element["options"] if o["value"] == given)
                )
                state[block_id] = {action_id: {"type": kind, "selected_option": chosen}}
            elif kind == "conversations_select":
                state[block_id] = {action_id: {"type": kind, "selected_conversation": given}}
            elif kind == "file_input":
                state[block_id] = {action_id: {"type": kind, "files": given or []}}
            else:
                text = element.get("initial_value") if given is None else given
                state[block_id] = {action_id: {"type": kind, "value": text}}
        return {**self._view_json(opened), "state": {"values": state}, "team_id": "T0001"}


# --- installs: OAuth v2 and a bot token per workspace ----------------------------------------------

CLIENT_ID = "1111.2222"
CLIENT_SECRET = "fake-client-secret-0123456789"


@dataclass
class Workspace:
    team: str
    name: str
    bot_user: str
    bot_id: str
    token: str


@dataclass
class InstallsState:
    codes: dict[str, tuple[Workspace, bool]] = field(default_factory=dict)  # code → (workspace, used)
    tokens: dict[str, Workspace] = field(default_factory=dict)  # bot token → its workspace
    revoked: set[str] = field(default_factory=set)


class SlackInstalls:
    """Mixed into FakeSlack: `oauth.v2.access` exchanges a code Slack gave an installer for that
    workspace's bot token (client id and secret checked, each code used once); `auth.test` answers
    for the workspace a token belongs to; a revoked token is refused (`token_revoked`)."""

    current_token: str | None = None

    @property
    def installs(self) -> InstallsState:
        state = self.__dict__.get("_installs_state")
        if state is None:
            state = self.__dict__["_installs_state"] = InstallsState()
        return state

    def approve_install(self, team: str, name: str = "Second Workspace") -> str:
        """A person approved the install in `team`: the code Slack puts in the redirect."""
        token = f"xoxb-{team.lower()}-{uuid.uuid4().hex[:16]}"
        workspace = Workspace(team, name, f"UBOT{team}", f"BBOT{team}", token)
        code = f"code-{uuid.uuid4().hex}"
        self.installs.codes[code] = (workspace, False)
        return code

    def revoke(self, team: str) -> None:
        """The workspace removed the app: its tokens stop working."""
        for token, workspace in self.installs.tokens.items():
            if workspace.team == team:
                self.installs.revoked.add(token)

    def token_refused(self, token: str | None) -> bool:
        return token is not None and token in self.installs.revoked

    def identity(self) -> dict[str, Any]:
        """auth.test's answer fields for the calling token's workspace (none for the default one)."""
        workspace = self.installs.tokens.get(self.current_token or "")
        if workspace is None:
            return {}
        return {
            "team": workspace.name,
            "team_id": workspace.team,
            "user_id": workspace.bot_user,
            "bot_id": workspace.bot_id,
            "url": f"https://{workspace.team.lower()}.slack.com/",
        }

    def oauth_v2_access(self, a: dict[str, Any], authorization: str) -> dict[str, Any]:
        client_id, client_secret = a.get("client_id"), a.get("client_secret")
        if authorization.startswith("Basic "):
            decoded = base64.b64decode(authorization.removeprefix("Basic ")).decode()
            client_id, _, client_secret = decoded.partition(":")
        if client_id != CLIENT_ID:
            return {"ok": False, "error": "invalid_client_id"}
        if client_secret != CLIENT_SECRET:
            return {"ok": False, "error": "bad_client_secret"}
        found = self.installs.codes.get(str(a.get("code") or ""))
        if found is None:
            return {"ok": False, "error": "invalid_code"}
        workspace, used = found
        if used:
            return {"ok": False, "error": "code_already_used"}
        self.installs.codes[str(a["code"])] = (workspace, True)
        self.installs.tokens[workspace.token] = workspace
        return {
            "ok": True,
            "app_id": "A0001",
            "authed_user": {"id": "UINSTALLER"},
            "scope": "app_mentions:read,chat:write",
            "token_type": "bot",
            "access_token": workspace.token,
            "bot_user_id": workspace.bot_user,
            "team": {"id": workspace.team, "name": workspace.name},
            "enterprise": None,
            "is_enterprise_install": False,
        }
