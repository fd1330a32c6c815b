"""A stored debate as the files the transcript reply attaches: its Markdown, and the page to share
(one self-contained HTML file, every stored text escaped; adapters/pictures/page.py)."""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence

import discord

from adapters.pictures.page import debate_page_html
from core.events import Event
from core.ports import DebateRecord
from core.transcript import to_markdown

log = logging.getLogger(__name__)


async def transcript_files(record: DebateRecord, events: Sequence[Event]) -> list[discord.File]:
    """`rostra-<id>.md` and `rostra-<id>.html` (the Markdown alone when the page cannot be made)."""
    markdown = to_markdown(record, events).encode("utf-8")
    files = [discord.File(io.BytesIO(markdown), filename=f"rostra-{record.id}.md")]
    try:
        page = await debate_page_html(record, events)  # drawn off the event loop
    except Exception:
        log.warning(
            "debate %s: its page could not be made; the transcript goes without it", record.id, exc_info=True
        )
        return files
    files.append(discord.File(io.BytesIO(page.encode("utf-8")), filename=f"rostra-{record.id}.html"))
    return files
