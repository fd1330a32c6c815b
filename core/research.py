"""Web research for debaters: agno's Tavily tools, and the sources a turn cites.

Research is off unless configured (`formats.oxford.research.enabled`) with TAVILY_API_KEY and the
`research` extra installed. A debater may make at most `max_tool_calls` tool calls per turn; the
links it cites as Markdown become the turn's sources.
"""

from __future__ import annotations

import re

from core.models import Source

_LINK = re.compile(r"\[([^\]\n]{1,200})\]\((https?://[^\s)]{1,500})\)")


def find_sources(text: str) -> tuple[Source, ...]:
    """Markdown links `[title](https://...)` in a turn, first occurrence of each URL."""
    seen: dict[str, Source] = {}
    for title, url in _LINK.findall(text):
        seen.setdefault(url, Source(title=" ".join(title.split()), url=url))
    return tuple(seen.values())
