"""A stored debate as the files its transcript is attached as: its Markdown, and the page to share
(one self-contained HTML file, every stored text escaped; adapters/pictures/page.py); and how often
one debate's files are attached where everyone sees them (`TRANSCRIPT_EVERY`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.pictures.page import debate_page_html
from core.events import Event
from core.ports import DebateRecord
from core.transcript import to_markdown

log = logging.getLogger(__name__)

TRANSCRIPT_EVERY = 600.0  # seconds between two uploads of one debate's transcript (by any worker)


@dataclass(frozen=True)
class TranscriptFile:
    filename: str
    title: str
    content: str


async def transcript_files(record: DebateRecord, events: Sequence[Event]) -> list[TranscriptFile]:
    """`rostra-<id>.md` and `rostra-<id>.html` (the Markdown alone when the page cannot be made)."""
    files = [
        TranscriptFile(f"rostra-{record.id}.md", f"Transcript: {record.topic}", to_markdown(record, events))
    ]
    try:
        page = await debate_page_html(record, events)  # drawn off the event loop
    except Exception:
        log.warning(
            "debate %s: its page could not be made; the transcript goes without it", record.id, exc_info=True
        )
        return files
    files.append(TranscriptFile(f"rostra-{record.id}.html", f"Page to share: {record.topic}", page))
    return files
