"""When a Slack debate ends, its result reaches the channel: a reply in the debate's thread that is
also sent to the channel (`reply_broadcast`), after the closing card (`slack.post_results`)."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.results import Announcements, result_of
from adapters.slack.delivery.sink import NETWORK_ERRORS, SlackSink
from adapters.slack.render.results import result_message
from core.session import DebateHandle

log = logging.getLogger(__name__)


class SlackResults:
    def __init__(self, rt: Host, client: AsyncWebClient) -> None:
        self._rt = rt
        self._client = client
        self._posts = Announcements()

    def follow(self, handle: DebateHandle, sink: SlackSink) -> None:
        """Post `handle`'s result to its channel once it has ended and its thread shows the end."""
        if not self._rt.config.slack.post_results:
            return
        self._posts.start(self._announce(handle, sink), name=f"slack-result-{handle.debate_id}")

    async def _announce(self, handle: DebateHandle, sink: SlackSink) -> None:
        try:
            await handle.wait()
            await sink.delivered()
            result = result_of(await self._rt.store.events(handle.debate_id))
            if result is None:
                return
            text = result_message(result, channel=sink.channel, thread_ts=sink.thread_ts)
            await self._client.chat_postMessage(
                channel=sink.channel,
                thread_ts=sink.thread_ts,
                reply_broadcast=True,
                text=text,
                parse="none",
                unfurl_links=False,
            )
        except (SlackApiError, *NETWORK_ERRORS) as exc:
            log.warning("debate %s: could not post its result to the channel: %r", handle.debate_id, exc)
        except Exception:
            log.exception("debate %s: posting its result failed", handle.debate_id)

    async def wait(self) -> None:
        """Until every result due has been posted."""
        await self._posts.wait()

    async def aclose(self) -> None:
        await self._posts.aclose()
