"""The command grammar shared by `@Rostra …` and `/debate …` (pure; plain text in, a command out).

    debate <topic> [format=…] [rounds=…] [duration=…] [humans=off|tiebreak|vote]
    stop | status | transcript [id] | personas | help

A topic may be quoted ("…" or “…”) so that it can contain `key=value` words. Options other than the
four documented ones are passed to the format, which refuses what it does not take. `duration`
accepts seconds or units: `90`, `90s`, `5m`, `1m30s`, `1h`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

START_WORDS = ("debate", "start")
_OPTION = re.compile(r"^([a-z][a-z_]*)=(.*)$")
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$")
MAX_DIGITS = 9
"""Digits a number may have: more is refused before anything converts it (no 4,300-digit ints)."""
MAX_VALUE_CHARS = 200
"""Characters an option's value may have."""
_QUOTES = {'"': '"', "“": "”", "'": "'", "‘": "’", "«": "»"}


@dataclass(frozen=True)
class Start:
    topic: str
    format: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Status:
    pass


@dataclass(frozen=True)
class Transcript:
    debate_id: str | None = None


@dataclass(frozen=True)
class Personas:
    pass


@dataclass(frozen=True)
class Help:
    """Show the help; `unknown` is what was not understood (None when help was asked for)."""

    unknown: str | None = None


@dataclass(frozen=True)
class Invalid:
    """A start whose options cannot be read; `message` says why."""

    message: str


Command = Start | Stop | Status | Transcript | Personas | Help | Invalid


def parse_duration(text: str) -> int | str:
    """`5m` → 300; text that is not a duration is returned as is (the format then refuses it)."""
    match = _DURATION.match(text.strip().lower())
    if not match or not any(match.groups()):
        return text
    if any(g and len(g) > MAX_DIGITS for g in match.groups()):
        return text  # far too long to be a duration: refused as one, never converted
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def _strip_quotes(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        return text[1:-1].strip()
    return text


def _split_quoted_topic(text: str) -> tuple[str, str, str] | None:
    """`"topic" rest` → ("", topic, rest); `opts "topic" rest` too. None when there is no quoted topic."""
    for opening, closing in _QUOTES.items():
        start = text.find(opening)
        if start == -1 or any(not _OPTION.match(w) for w in text[:start].split()):
            continue
        end = text.find(closing, start + 1)
        if end != -1:
            return text[:start], text[start + 1 : end].strip(), text[end + 1 :]
    return None


def _read_options(words: list[str]) -> tuple[dict[str, str], str | None]:
    found: dict[str, str] = {}
    for word in words:
        match = _OPTION.match(word)
        if match is None:
            return found, f"I couldn't read {word!r}: options look like key=value, after the topic."
        key, value = match.group(1), _strip_quotes(match.group(2))
        if len(value) > MAX_VALUE_CHARS:
            return (
                found,
                f"The value of {key} is {len(value):,} characters long; the limit is {MAX_VALUE_CHARS}.",
            )
        if value.isdigit() and len(value.lstrip("0")) > MAX_DIGITS:
            return found, f"{key} is far too large ({len(value):,} digits)."
        if key in found:
            return found, f"The option {key} is given twice."
        found[key] = value
    return found, None


def _parse_start(text: str) -> Start | Invalid:
    quoted = _split_quoted_topic(text)
    if quoted is not None:
        before, topic, after = quoted
        words = before.split() + after.split()
    else:
        tokens = text.split()
        lead = 0
        while lead < len(tokens) and _OPTION.match(tokens[lead]):
            lead += 1
        tail = len(tokens)
        while tail > lead and _OPTION.match(tokens[tail - 1]):
            tail -= 1
        topic = _strip_quotes(" ".join(tokens[lead:tail]))
        words = tokens[:lead] + tokens[tail:]
    raw, problem = _read_options(words)
    if problem is not None:
        return Invalid(problem)
    options: dict[str, Any] = {}
    fmt: str | None = None
    for key, value in raw.items():
        if key == "format":
            fmt = value.lower()
        elif key == "duration":
            options[key] = parse_duration(value)
        else:
            options[key] = value.lower() if key == "humans" else value
    return Start(topic=topic, format=fmt, options=options)


def parse_command(text: str, *, slash: bool = False) -> Command:
    """Read a command. For `/debate` a text that starts with no command word is a topic."""
    text = text.strip()
    if not text:
        return Help()
    first, *others = text.split(maxsplit=1)
    verb = first.lower().rstrip(":,")
    rest = others[0].strip() if others else ""
    if verb in START_WORDS:
        return _parse_start(rest)
    if verb in ("stop", "end", "cancel") and not rest:
        return Stop()
    if verb == "status" and not rest:
        return Status()
    if verb == "transcript":
        return Transcript(rest.split()[0] if rest else None)
    if verb in ("personas", "cast") and not rest:
        return Personas()
    if verb in ("help", "?") and not rest:
        return Help()
    if slash:
        return _parse_start(text)
    return Help(unknown=text)
