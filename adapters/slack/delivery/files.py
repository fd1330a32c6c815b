"""One file into a debate's thread: Slack's upload in its two calls (files.getUploadURLExternal,
then files.completeUploadExternal, through slack_sdk's `files_upload_v2`), each taken from the
workspace's rate windows first, so a closing picture and a transcript stay within its budget."""

from __future__ import annotations

from contextlib import AsyncExitStack

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.rates import UPLOAD_METHODS, rates_of

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
