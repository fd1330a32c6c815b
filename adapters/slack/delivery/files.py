"""One file into a debate's thread: Slack's upload in its two calls (files.getUploadURLExternal,
then files.completeUploadExternal, through slack_sdk's `files_upload_v2`), each taken from the
workspace's rate windows first, so a closing picture and a transcript stay within its budget.

An upload Slack failed (a 5xx, no answer: Slack is down) is tried again once Slack answers, as any
final state is. Whether the failed one was shared anyway is unknown when its last call failed
(`shared_unsure`): the channel's files are then looked through for it before uploading again
(`shared_already`), so that it shows once.
"""

from __future__ import annotations

import logging
import re
from contextlib import AsyncExitStack

from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.failures import NETWORK_ERRORS, ReadBackDeferred, api_error, slack_down
from adapters.slack.delivery.rates import UPLOAD_METHODS, rates_of
from adapters.slack.render.ops import Upload

log = logging.getLogger(__name__)

ALT_LIMIT = 1000
"""Characters Slack keeps of an image's alt text."""


async def upload_file(
    client: AsyncWebClient,
    *,
    channel: str,
    thread_ts: str | None,
    filename: str,
    content: str | bytes,
    title: str,
    alt: str = "",
) -> None:
    """Upload `content` (text, or an image's bytes with its `alt` text). Raises Slack errors."""
    rates = rates_of(client)
    async with AsyncExitStack() as held:
        for method in UPLOAD_METHODS:  # one of each per file, counted until the upload is done
            await held.enter_async_context(rates[method].held())
        await _upload(client, channel, thread_ts, filename, content, title, alt)


async def _upload(
    client: AsyncWebClient,
    channel: str,
    thread_ts: str | None,
    filename: str,
    content: str | bytes,
    title: str,
    alt: str,
) -> None:
    if isinstance(content, bytes):
        await client.files_upload_v2(
            channel=channel,
            thread_ts=thread_ts,
            file=content,
            filename=filename,
            title=title,
            alt_txt=alt[:ALT_LIMIT] or None,
        )
    else:
        await client.files_upload_v2(
            channel=channel, thread_ts=thread_ts, content=content, filename=filename, title=title
        )


async def upload_once(
    client: AsyncWebClient,
    channel: str,
    thread_ts: str | None,
    op: Upload,
    unsure: set[str],
    *,
    since: float | None = None,
) -> str | None:
    """Upload `op`'s file into the thread unless it is there already: None once it is up, else why
    Slack refused it. Slack failing is raised (ReadBackDeferred when it cannot say whether a lost
    upload was shared); `unsure` holds the files whose last upload's answer was lost, looked for
    among the channel's files (those shared since `since`, a Unix time, if given)."""
    if op.filename in unsure:
        shared = await shared_already(client, channel=channel, filename=op.filename, since=since)
        if shared is None:
            raise ReadBackDeferred(f"could not look for {op.filename} among the channel's files now")
        unsure.discard(op.filename)
        if shared:
            log.info("%s had been shared although Slack's answer was lost; keeping it", op.filename)
            return None
    try:
        await upload_file(
            client,
            channel=channel,
            thread_ts=thread_ts,
            filename=op.filename,
            content=op.content,
            title=op.title,
            alt=op.alt,
        )
    except (SlackApiError, *NETWORK_ERRORS) as exc:
        if upload_down(exc):
            if shared_unsure(exc):
                unsure.add(op.filename)
            raise
        return api_error(exc) if isinstance(exc, SlackApiError) else type(exc).__name__
    return None


def upload_down(exc: BaseException) -> bool:
    """Whether an upload failed because Slack is failing (trying again later may work), not because
    it refused the file. The upload host's answer (the middle step) comes as SlackRequestError,
    with its status in the message."""
    if isinstance(exc, SlackRequestError):
        status = re.search(r"status: (\d+)", str(exc))
        return status is not None and int(status.group(1)) >= 500
    return slack_down(exc)


def shared_unsure(exc: BaseException) -> bool:
    """Whether the failed upload may have been shared all the same: its last call failed (a 5xx from
    files.completeUploadExternal) or a call went unanswered."""
    if isinstance(exc, SlackApiError):
        return str(exc.response.api_url).endswith("files.completeUploadExternal")
    return not isinstance(exc, SlackRequestError)


async def shared_already(
    client: AsyncWebClient, *, channel: str, filename: str, since: float | None = None
) -> bool | None:
    """Whether a file named `filename` is shared in `channel` (the newest files, or those since
    `since`; Rostra's file names are the debate's own); None when Slack cannot say now (it is
    failing, or the budget is spent). Refused the look (no `files:read`, say), it counts as not
    shared: uploaded again, it shows."""
    if not rates_of(client)["files.list"].try_take(spare=0.0):
        return None
    after = None if since is None else str(int(since))
    try:
        response = await client.files_list(channel=channel, count=LOOK_BACK_FILES, ts_from=after)
    except (SlackApiError, *NETWORK_ERRORS) as exc:
        log.warning("could not look for %s among the channel's files: %r", filename, exc)
        return None if slack_down(exc) else False
    return any(f.get("name") == filename for f in response.get("files") or [])


LOOK_BACK_FILES = 20
"""The newest files of the channel looked through for one whose upload's answer was lost."""
