"""`transcript [id]`: find a stored debate of this workspace and attach its Markdown and its page to
share (HTML) to its thread, at most once per debate a window (adapters/transcript_files.py:
asking 25 times posts one pair of files, the later asks are pointed to the earlier one)."""

from __future__ import annotations

import time

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.delivery.failures import api_error
from adapters.slack.delivery.files import upload_once
from adapters.slack.inbound.replies import until_slack_answers
from adapters.slack.render.ops import Upload
from adapters.stored_debates import latest_debate, named_debate
from adapters.transcript_files import transcript_files
from core.ports import DebateRecord

PLATFORM = "slack"
CLOCK_SKEW = 60.0
"""Seconds Slack's clock may be behind this machine's, when files shared since an ask are looked for."""


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


async def attach_transcript(rt: Host, client: AsyncWebClient, record: DebateRecord) -> str | None:
    """Upload the transcript into the debate's thread (or its channel): the Markdown, then the page
    to share beside it (adapters/transcript_files.py), one upload each. While Slack fails, each
    waits it out as a reply to the person does (up to `REPLY_WAIT`); one whose answer was lost is
    looked for among the channel's files shared since the ask before it is uploaded again. None once
    attached; else why not, in Slack's words."""
    where = await rt.store.binding_values(record.id)
    channel, thread_ts = where.get("channel") or record.binding.channel, where.get("thread_ts")
    since = time.time() - CLOCK_SKEW  # an earlier transcript of the debate is older than the window
    unsure: set[str] = set()  # files whose upload's answer was lost
    for file in await transcript_files(record, await rt.store.events(record.id)):
        op = Upload(file.filename, file.content, file.title)
        failed = await _upload_waiting(client, channel, thread_ts, op, unsure, since)
        if failed is not None:
            return failed
    return None


async def _upload_waiting(
    client: AsyncWebClient, channel: str, thread_ts: str | None, op: Upload, unsure: set[str], since: float
) -> str | None:
    """One file, uploaded once while Slack fails (`until_slack_answers`): None once it is up, else why
    not, in Slack's words."""
    refused: list[str] = []

    async def upload() -> None:
        reason = await upload_once(client, channel, thread_ts, op, unsure, since=since)
        if reason is not None:
            refused.append(reason)

    failure = await until_slack_answers(upload, what=f"the transcript file {op.filename}")
    if failure is not None:
        return api_error(failure) if isinstance(failure, SlackApiError) else type(failure).__name__
    return refused[0] if refused else None


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
