"""The "Start a debate" modal (pure): the view, and what a submitted view asks for.

The modal is opened by `/debate` with no text, the App Home's Start button and the message shortcut
"Debate this message". It holds the topic, the format, that format's options (read from the format's
own `Options` model, so a new option shows up without touching this file), who may vote, and a file
input for panel documents. Changing the format redraws the options (`views.update`); Slack keeps what
was typed in blocks whose ids stay the same.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from annotated_types import Ge, Le
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from adapters.card_text import HUMANS_CHOICES
from adapters.slack.inbound.commands import parse_duration
from adapters.slack.inbound.documents import SlackFile
from adapters.slack.render.ops import Block

CALLBACK_ID = "rostra_start"
FORMAT_ACTION = "rostra_start_format"
VALUE = "value"  # the action id of every input in the modal
TOPIC_BLOCK = "topic"
FORMAT_BLOCK = "format"
CHANNEL_BLOCK = "channel"
DOCUMENTS_BLOCK = "documents"
OPTION_PREFIX = "opt:"
TOPIC_INPUT_LIMIT = 3000  # Slack's plain_text_input max_length
TITLE = "Start a debate"
# Options the modal does not ask for: documents come from the file input.
HIDDEN_OPTIONS = frozenset({"documents", "question_document", "first_speaker"})
OPTION_LABELS = {
    "humans": "Who may vote",
    "rounds": "Rounds",
    "duration": "Duration",
    "human_window": "Seconds people have to vote",
    "exchanges_per_round": "Exchanges before each vote",
    "strategy": "How the council decides",
    "questions": "Questions to draw from the question document",
}
CHOICE_LABELS = {("humans", value): label for value, label in HUMANS_CHOICES.items()}
MAX_FILES = 10


@dataclass(frozen=True)
class Origin:
    """Where the modal was opened from: the channel to start in (None: ask for one)."""

    channel: str | None = None
    source: str = "command"  # command | shortcut | home

    def metadata(self) -> str:
        return json.dumps({"channel": self.channel, "source": self.source})

    @classmethod
    def from_metadata(cls, text: str) -> Origin:
        try:
            raw = json.loads(text or "{}")
        except ValueError:
            raw = {}
        channel = raw.get("channel") if isinstance(raw, dict) else None
        source = raw.get("source") if isinstance(raw, dict) else None
        return cls(channel=str(channel) if channel else None, source=str(source or "command"))


@dataclass(frozen=True)
class Submission:
    """What a submitted modal asks for."""

    topic: str
    format: str
    channel: str | None
    options: dict[str, Any] = field(default_factory=dict)
    files: tuple[SlackFile, ...] = ()


def _plain(text: str, limit: int = 75) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:limit]}


def _input(block_id: str, label: str, element: dict[str, Any], *, optional: bool, hint: str = "") -> Block:
    block: Block = {
        "type": "input",
        "block_id": block_id,
        "label": _plain(label, 2000),
        "element": {**element, "action_id": VALUE},
        "optional": optional,
    }
    if hint:
        block["hint"] = _plain(hint, 2000)
    return block


def _literal_values(annotation: Any) -> tuple[str, ...] | None:
    """The choices of a `Literal[...]` (or `Literal[...] | None`) annotation, else None."""
    if typing.get_origin(annotation) is Literal:
        return tuple(str(v) for v in typing.get_args(annotation))
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        for arg in typing.get_args(annotation):
            found = _literal_values(arg)
            if found:
                return found
    return None


def _is_int(annotation: Any) -> bool:
    if annotation is int:
        return True
    args = typing.get_args(annotation)
    return bool(args) and int in args and all(a in (int, type(None)) for a in args)


def _is_str(annotation: Any) -> bool:
    if annotation is str:
        return True
    args = typing.get_args(annotation)
    return bool(args) and str in args and all(a in (str, type(None)) for a in args)


def _bounds(info: FieldInfo) -> tuple[int | None, int | None]:
    low = high = None
    for meta in info.metadata:
        if isinstance(meta, Ge) and isinstance(meta.ge, int):
            low = meta.ge
        if isinstance(meta, Le) and isinstance(meta.le, int):
            high = meta.le
    return low, high


def _option_block(name: str, info: FieldInfo, default: Any) -> Block | None:
    label = OPTION_LABELS.get(name, name.replace("_", " ").capitalize())
    hint = (info.description or "").capitalize()
    if default is not None and default is not PydanticUndefined:
        hint = f"{hint} (left empty: {default})" if hint else f"Left empty: {default}"
    block_id = OPTION_PREFIX + name
    choices = _literal_values(info.annotation)
    if choices:
        element: dict[str, Any] = {
            "type": "static_select",
            "placeholder": _plain("Default"),
            "options": [{"text": _plain(CHOICE_LABELS.get((name, c), c)), "value": c} for c in choices],
        }
        return _input(block_id, label, element, optional=True, hint=hint)
    if name == "duration":
        element = {"type": "plain_text_input", "placeholder": _plain("e.g. 5m, 90s, 1m30s")}
        return _input(block_id, label, element, optional=True, hint=hint)
    if _is_int(info.annotation):
        element = {"type": "number_input", "is_decimal_allowed": False}
        low, high = _bounds(info)
        if low is not None:
            element["min_value"] = str(low)
        if high is not None:
            element["max_value"] = str(high)
        return _input(block_id, label, element, optional=True, hint=hint)
    if _is_str(info.annotation):
        return _input(block_id, label, {"type": "plain_text_input"}, optional=True, hint=hint)
    return None


def start_modal(
    formats: Mapping[str, type[Any]],
    *,
    origin: Origin,
    fmt: str,
    topic: str = "",
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    document_chars: int = 0,
) -> dict[str, Any]:
    """The modal for `fmt` (its options below the topic and format)."""
    defaults = defaults or {}
    blocks: list[Block] = []
    topic_element: dict[str, Any] = {
        "type": "plain_text_input",
        "multiline": True,
        "max_length": TOPIC_INPUT_LIMIT,
        "placeholder": _plain("Should cities ban cars from their centres?"),
    }
    if topic:
        topic_element["initial_value"] = topic[:TOPIC_INPUT_LIMIT]
    blocks.append(_input(TOPIC_BLOCK, "Topic", topic_element, optional=False))
    if origin.channel is None:
        channel_element = {
            "type": "conversations_select",
            "filter": {"include": ["public", "private"], "exclude_bot_users": True},
            "placeholder": _plain("Pick a channel Rostra is in"),
        }
        blocks.append(_input(CHANNEL_BLOCK, "Channel", channel_element, optional=False))
    format_options = [
        {
            "text": _plain(name),
            "description": _plain(str(getattr(cls, "description", "")) or name),
            "value": name,
        }
        for name, cls in formats.items()
    ]
    current = next((o for o in format_options if o["value"] == fmt), format_options[0])
    current_name = str(current["value"])
    format_element = {"type": "static_select", "options": format_options, "initial_option": current}
    format_block = _input(FORMAT_BLOCK, "Format", format_element, optional=False)
    format_block["element"]["action_id"] = FORMAT_ACTION
    format_block["dispatch_action"] = True
    blocks.append(format_block)
    options_model: type[BaseModel] | None = getattr(formats.get(current_name), "Options", None)
    takes_documents = False
    if options_model is not None:
        fmt_defaults = defaults.get(current_name, {})
        for name, info in options_model.model_fields.items():
            if name == "documents":
                takes_documents = True
            if name in HIDDEN_OPTIONS:
                continue
            block = _option_block(name, info, fmt_defaults.get(name, info.default))
            if block is not None:
                blocks.append(block)
    if takes_documents:
        limit = f", up to {document_chars:,} characters each" if document_chars else ""
        blocks.append(
            _input(
                DOCUMENTS_BLOCK,
                "Documents",
                {
                    "type": "file_input",
                    "filetypes": ["txt", "md", "markdown", "text"],
                    "max_files": MAX_FILES,
                },
                optional=True,
                hint=f"One text or Markdown file per panellist, in order{limit}; a file named"
                " questions.md holds the questions.",
            )
        )
    return {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "title": _plain(TITLE, 24),
        "submit": _plain("Start", 24),
        "close": _plain("Cancel", 24),
        "private_metadata": origin.metadata(),
        "blocks": blocks,
    }


def _value_of(element: Mapping[str, Any]) -> Any:
    kind = element.get("type")
    if kind == "static_select":
        option = element.get("selected_option") or {}
        return option.get("value")
    if kind == "conversations_select":
        return element.get("selected_conversation")
    if kind == "file_input":
        return element.get("files") or []
    return element.get("value")


def read_state(view: Mapping[str, Any]) -> dict[str, Any]:
    """block id → the value of its input (None when left empty)."""
    values = (view.get("state") or {}).get("values") or {}
    out: dict[str, Any] = {}
    for block_id, actions in values.items():
        for element in actions.values():
            out[block_id] = _value_of(element)
    return out


def chosen_format(view: Mapping[str, Any], fallback: str) -> str:
    value = read_state(view).get(FORMAT_BLOCK)
    return str(value) if value else fallback


NUMBER_DIGITS = 9  # the most digits a number field takes (no option needs more)


class FormError(ValueError):
    """A field of a submitted modal that cannot be read; `block_id` is where to say so."""

    def __init__(self, block_id: str, message: str) -> None:
        super().__init__(message)
        self.block_id = block_id


def _whole_number(name: str, text: str) -> int:
    """A number field's value: ASCII digits, not too many (a forged "²" or 5,000 digits is refused)."""
    digits = text.removeprefix("-")
    if not digits.isascii() or len(digits) > NUMBER_DIGITS:
        raise FormError(
            OPTION_PREFIX + name, f"{name} must be a whole number of at most {NUMBER_DIGITS} digits."
        )
    return int(text)


def read_submission(view: Mapping[str, Any], fallback_format: str) -> Submission:
    """What the submitted modal asks for. Raises FormError for a field that cannot be read."""
    state = read_state(view)
    origin = Origin.from_metadata(str(view.get("private_metadata") or ""))
    options: dict[str, Any] = {}
    for block_id, value in state.items():
        if not block_id.startswith(OPTION_PREFIX) or value in (None, ""):
            continue
        name = block_id.removeprefix(OPTION_PREFIX)
        if name == "duration":
            options[name] = parse_duration(str(value))
        elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
            options[name] = _whole_number(name, value.strip())
        else:
            options[name] = value
    channel = origin.channel or (str(state[CHANNEL_BLOCK]) if state.get(CHANNEL_BLOCK) else None)
    files = tuple(SlackFile.from_slack(f) for f in state.get(DOCUMENTS_BLOCK) or [] if isinstance(f, dict))
    return Submission(
        topic=str(state.get(TOPIC_BLOCK) or "").strip(),
        format=str(state.get(FORMAT_BLOCK) or fallback_format),
        channel=channel,
        options=options,
        files=files,
    )


def error_block(message: str, view: Mapping[str, Any]) -> str:
    """The modal block a refusal is about (shown under it): an option, the documents, else the topic."""
    present = set(read_state(view))
    text = message.lower()
    for block_id in sorted(present):
        if block_id.startswith(OPTION_PREFIX):
            name = block_id.removeprefix(OPTION_PREFIX)
            if text.startswith(name) or f"'{name}'" in text or f" {name} " in f" {text} ":
                return block_id
    if DOCUMENTS_BLOCK in present and ("document" in text or "file" in text):
        return DOCUMENTS_BLOCK
    if "format" in text and "topic" not in text:
        return FORMAT_BLOCK
    return TOPIC_BLOCK
