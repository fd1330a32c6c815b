"""A finished debate's result in Discord markdown (pure): the message the channel it was started
from gets, and the line added to the start card."""

from __future__ import annotations

import discord

from adapters.results import DebateResult
from adapters.results import result_message as _result_message


def result_message(result: DebateResult, thread_id: int) -> str:
    escape = discord.utils.escape_markdown
    return _result_message(
        result,
        head=f"🏁 **Debate over: {escape(result.topic)}**",
        italic=lambda text: f"*{text}*",
        escape=escape,
        link=f"The whole debate: <#{thread_id}>",
    )


def card_result(result: DebateResult) -> str:
    """The line added to the start card."""
    return f"🏁 {result.decision or result.ending.capitalize()}"
