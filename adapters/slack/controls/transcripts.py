"""`transcript [id]`: find a stored debate of this workspace and attach its Markdown and its page to
share (HTML) to its thread, at most once per debate every `TRANSCRIPT_EVERY` seconds (asking 25 times
posts one pair of files: the later asks are pointed to the earlier one)."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk.errors import SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.pictures.page import debate_page_html
from adapters.slack.delivery.files import upload_file
from adapters.stored_debates import latest_debate, named_debate
from core.ports import DebateRecord
from core.transcript import to_markdown

PLATFORM = "slack"
TRANSCRIPT_EVERY = 600.0  # seconds between two uploads of one debate's transcript
_REMEMBERED = 1000  # debates whose last upload is remembered


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


log = logging.getLogger(__name__)


async def find_record(rt: Host, *, team: str, channel: str, debate_id: str | None) -> DebateRecord | None:
    """The named debate, else this channel's running or latest debate.

    A debate named by id is served only when asked for from its own channel: whoever asks there can
    see it, and nobody learns anything (not even that it exists) about a debate held in a channel
    they may not be able to see.
    """
    if debate_id:
        record = await named_debate(rt, debate_id, platform=PLATFORM, scope=team)
        if record is None:
            return None
        where = await rt.store.binding_values(record.id)
        return record if (where.get("channel") or record.binding.channel) == channel else None
    return await latest_debate(rt, platform=PLATFORM, scope=team, channel=channel)


async def attach_transcript(rt: Host, client: AsyncWebClient, record: DebateRecord) -> None:
    """Upload the transcript into the debate's thread (or its channel): the Markdown, then the page
    to share beside it (one self-contained HTML file, every stored text escaped), one upload each.
    Raises Slack errors."""
    events = await rt.store.events(record.id)
    where = await rt.store.binding_values(record.id)
    channel = where.get("channel") or record.binding.channel
    thread_ts = where.get("thread_ts")
    await upload_file(
        client,
        channel=channel,
        thread_ts=thread_ts,
        content=to_markdown(record, events),
        filename=f"rostra-{record.id}.md",
        title=f"Transcript: {record.topic}",
    )
    try:
        page = await debate_page_html(record, events)  # drawn off the event loop
    except Exception:
        log.warning(
            "debate %s: its page could not be made; the transcript goes without it", record.id, exc_info=True
        )
        return
    await upload_file(
        client,
        channel=channel,
        thread_ts=thread_ts,
        content=page,
        filename=f"rostra-{record.id}.html",
        title=f"Page to share: {record.topic}",
    )


async def thread_link(rt: Host, client: AsyncWebClient, record: DebateRecord) -> str | None:
    """The permalink of the debate's thread (where its transcript is), or None."""
    where = await rt.store.binding_values(record.id)
    channel, ts = where.get("channel") or record.binding.channel, where.get("thread_ts")
    if not ts:
        return None
    try:
        response = await client.chat_getPermalink(channel=channel, message_ts=ts)
    except (SlackClientError, OSError, TimeoutError):
        return None
    link = response.get("permalink")
    return str(link) if link else None
