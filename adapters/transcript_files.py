"""A stored debate as the files its transcript is attached as: its Markdown, and the page to share
(one self-contained HTML file, every stored text escaped; adapters/pictures/page.py); and how often
one debate's files are attached where everyone sees them (`TranscriptLimit`)."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from adapters.pictures.page import debate_page_html
from core.events import Event
from core.ports import DebateRecord
from core.transcript import to_markdown

log = logging.getLogger(__name__)

TRANSCRIPT_EVERY = 600.0  # seconds between two uploads of one debate's transcript
_REMEMBERED = 1000  # debates whose last upload is remembered


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


@dataclass
class Upload:
    at: float
    link: str | None = None  # where the earlier file is (the thread's permalink), once known


class TranscriptLimit:
    """When each debate's transcript was last attached, so that it is attached once per window."""

    def __init__(self, every: float = TRANSCRIPT_EVERY, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self._clock = clock
        self._uploads: OrderedDict[str, Upload] = OrderedDict()

    def earlier(self, debate_id: str) -> Upload | None:
        """The upload of this debate's transcript still inside the window (or under way), if any."""
        upload = self._uploads.get(debate_id)
        if upload is None or self._clock() - upload.at >= self.every:
            return None
        return upload

    def begin(self, debate_id: str) -> Upload:
        """Reserve the window before uploading (asks arriving meanwhile are pointed to this one)."""
        upload = self._uploads[debate_id] = Upload(self._clock())
        self._uploads.move_to_end(debate_id)
        while len(self._uploads) > _REMEMBERED:
            self._uploads.popitem(last=False)
        return upload

    def failed(self, debate_id: str) -> None:
        self._uploads.pop(debate_id, None)
