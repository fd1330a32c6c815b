"""Unicode emoji ↔ Slack emoji names (reactions and `icon_emoji`), and reaction normalisation."""

from __future__ import annotations

from collections.abc import Sequence

from core.models import VoteOption

# Slack names for the emoji the formats and the shipped personas use (add more as formats need them).
_NAMES: dict[str, str] = {
    "✅": "white_check_mark",
    "❌": "x",
    "👍": "+1",
    "👎": "-1",
    "🤷": "shrug",
    "🤔": "thinking_face",
    "✋": "raised_hand",
    "🙋": "raising_hand",
    "🟢": "large_green_circle",
    "🔴": "red_circle",
    "⚪": "white_circle",
    "0️⃣": "zero",
    "1️⃣": "one",
    "2️⃣": "two",
    "3️⃣": "three",
    "4️⃣": "four",
    "5️⃣": "five",
    "6️⃣": "six",
    "7️⃣": "seven",
    "8️⃣": "eight",
    "9️⃣": "nine",
    "🔟": "keycap_ten",
    "🅰️": "a",
    "🅱️": "b",
    "⚖️": "scales",
    "🧮": "abacus",
    "🦉": "owl",
    "🌱": "seedling",
    "📈": "chart_with_upwards_trend",
    "🪨": "rock",
    "🎙️": "studio_microphone",
    "🧑‍⚖️": "judge",
    "🛠️": "hammer_and_wrench",
    "🔭": "telescope",
    "🗳️": "ballot_box_with_ballot",
    "🏆": "trophy",
}
_VARIATION = "\ufe0f"
_BY_BARE = {k.replace(_VARIATION, ""): v for k, v in _NAMES.items()}
_POSITIONS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "keycap_ten")
# Names Slack reports for the same emoji (reaction events say `+1`, people type `thumbsup`).
_ALIASES = {
    "thumbsup": "+1",
    "thumbsdown": "-1",
    "heavy_check_mark": "white_check_mark",
    "ballot_box_with_check": "white_check_mark",
    "heavy_multiplication_x": "x",
    "negative_squared_cross_mark": "x",
}


def slack_name(emoji: str) -> str | None:
    """The Slack name of a Unicode emoji, or None when it is not in the table."""
    return _BY_BARE.get(emoji.replace(_VARIATION, ""))


def icon_emoji(emoji: str) -> str | None:
    """`:name:` for `icon_emoji`, or None."""
    name = slack_name(emoji)
    return f":{name}:" if name else None


def normalise_reaction(name: str) -> str:
    """`+1::skin-tone-3` → `+1`; `thumbsup` → `+1`."""
    bare = name.split("::", 1)[0]
    return _ALIASES.get(bare, bare)


def option_reactions(options: Sequence[VoteOption]) -> dict[str, str]:
    """Option key → the reaction that votes for it: the option's emoji, else its position (one, two…)."""
    chosen: dict[str, str] = {}
    for index, option in enumerate(options):
        name = slack_name(option.emoji)
        if name is None or name in chosen.values():
            name = _POSITIONS[index] if index < len(_POSITIONS) else f"option-{index + 1}"
        chosen[option.key] = name
    return chosen


def option_mark(option: VoteOption, reaction: str) -> str:
    """How the option's reaction is shown in text: its own emoji, or `:one:` when it has none in Slack."""
    return option.emoji if slack_name(option.emoji) == reaction else f":{reaction}:"
