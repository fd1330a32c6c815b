"""Many workspaces (OAuth install): one Slack front end per installed workspace, each with its own
bot token from the installation store, behind one object the listeners talk to.

`WorkspaceFronts` is a `SlackFrontEnd` whose requests go to the front end of the workspace they
come from (created on first use from that workspace's installation). When a workspace uninstalls
Rostra or revokes its tokens, its debates stop, its deliveries end and its installation (tokens
included) is deleted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.delivery.sink import SlackSink
from adapters.slack.inbound.commands import Start
from adapters.slack.inbound.dispatch import SlackFrontEnd
from adapters.slack.inbound.replies import Replies
from adapters.slack.inbound.requests import ReactionRequest, Request
from adapters.slack.install.installations import InstallationStore
from adapters.slack.results import SlackResults
from adapters.slack.settings import SlackSettings
from core.errors import NowhereToRun
from core.ports import DebateRecord
from core.session import DebateHandle

log = logging.getLogger(__name__)

UNINSTALLED = "Rostra was removed from this workspace"
ClientFactory = Callable[[str, SlackSettings], AsyncWebClient]
"""A Web API client for a workspace's bot token (with the app's retry policy)."""


class NotInstalled(LookupError):
    """A workspace without an installation (or whose tokens were revoked)."""


class WorkspaceFronts(SlackFrontEnd):
    def __init__(
        self,
        rt: Host,
        client: AsyncWebClient,
        installations: InstallationStore,
        make_client: ClientFactory,
    ) -> None:
        super().__init__(rt, client)
        self.installations = installations
        self._make_client = make_client
        self._fronts: dict[str, SlackFrontEnd] = {}
        self._retired: list[SlackFrontEnd] = []  # fronts of replaced tokens: their debates go on
        self._bot_users: dict[str, str | None] = {}
        self._lock = asyncio.Lock()
        self.results = _WorkspaceResults(self)

    def known_front(self, team: str) -> SlackFrontEnd | None:
        return self._fronts.get(team)

    async def front_for(self, team: str) -> SlackFrontEnd:
        """The front end of `team`, with the token its installation holds now. Raises NotInstalled.

        The installation is read every time (as Bolt reads it to authorize each request): another
        worker may have seen the workspace remove Rostra and install it again, with a new token."""
        bot = await self.installations.async_find_bot(enterprise_id=None, team_id=team)
        async with self._lock:
            front = self._fronts.get(team)
            if bot is None or not bot.bot_token:
                raise NotInstalled(team)
            if front is not None and front.client.token == bot.bot_token:
                return front
            if front is not None:  # installed again, with another token: new requests use that one
                log.info("Slack workspace %s has a new bot token: its new requests use it", team)
                self._retired.append(front)
            front = SlackFrontEnd(self.rt, self._make_client(bot.bot_token, self.settings))
            self._fronts[team] = front
            self._bot_users[team] = bot.bot_user_id
            return front

    def _every_front(self) -> list[SlackFrontEnd]:
        return [*self._fronts.values(), *self._retired]

    # --- requests go to their workspace --------------------------------------------------------

    async def handle(self, request: Request, replies: Replies, *, bot_user_id: str | None) -> None:
        try:
            front = await self.front_for(request.team)
        except NotInstalled:
            log.warning("a request from workspace %s, which has no installation", request.team)
            return
        await front.handle(request, replies, bot_user_id=bot_user_id)

    async def start(
        self, request: Request, command: Start, replies: Replies, *, bot_user_id: str | None
    ) -> None:
        try:
            front = await self.front_for(request.team)
        except NotInstalled:
            log.warning("a start from workspace %s, which has no installation", request.team)
            return
        await front.start(request, command, replies, bot_user_id=bot_user_id)

    async def refusal_for(self, request: Request) -> str | None:
        try:
            front = await self.front_for(request.team)
        except NotInstalled:
            return None  # the start itself is then ignored
        return await front.refusal_for(request)

    async def reaction(self, reaction: ReactionRequest, *, bot_user_id: str | None) -> None:
        """To the front end delivering a debate in that channel (channel ids are unique across
        workspaces), else to its workspace's: the card may be of a debate another worker runs."""
        for front in self._every_front():
            if front.desk.sink_in(reaction.channel) is not None:
                await front.reaction(reaction, bot_user_id=bot_user_id)
                return
        try:
            front = await self.front_for(reaction.team)
        except NotInstalled:
            log.warning("a reaction from workspace %s, which has no installation", reaction.team)
            return
        await front.reaction(reaction, bot_user_id=bot_user_id)

    # --- resuming after a restart: each debate in its own workspace --------------------------------

    async def reattach(
        self, record: DebateRecord, values: dict[str, str], bot_user_id: str | None
    ) -> SlackSink | None:
        """Raises NowhereToRun for a workspace without an installation: it removed Rostra (the
        worker Slack told stopped its debates through the store; one whose owner was frozen or
        killed then is closed here, and nothing is posted: its token is revoked)."""
        team = record.binding.scope
        try:
            front = await self.front_for(team)
        except NotInstalled:
            raise NowhereToRun(UNINSTALLED) from None
        return await front.reattach(record, values, self._bot_users.get(team))

    def forget(self, sink: SlackSink) -> None:
        for front in self._every_front():
            front.forget(sink)

    async def bot_user_id(self) -> str | None:
        return None  # each workspace has its own bot user (from its installation)

    # --- uninstall -------------------------------------------------------------------------------

    async def uninstalled(self, team: str) -> None:
        """Stop the workspace's debates, end its deliveries, delete its installation and tokens."""
        async with self._lock:
            front = self._fronts.pop(team, None)
            self._bot_users.pop(team, None)
        if front is not None:
            await front.aclose()  # nothing more is posted with the revoked token
        await stop_workspace(self.rt, team)
        await self.installations.async_delete_all(enterprise_id=None, team_id=team)
        log.info("Slack workspace %s removed Rostra: its debates stopped and its tokens deleted", team)

    # --- lifecycle -------------------------------------------------------------------------------

    async def wait_idle(self) -> None:
        for front in self._every_front():
            await front.wait_idle()
        await super().wait_idle()

    async def aclose(self) -> None:
        fronts = self._every_front()
        self._fronts.clear()
        self._retired.clear()
        for front in fronts:
            await front.aclose()
        await super().aclose()


async def stop_workspace(rt: Host, team: str) -> None:
    """Stop every debate of a workspace that removed Rostra, whichever worker runs it (Slack tells
    one worker): this one's at once, the others' through the store (`DebateManager.request_stop`)."""
    for record in await rt.store.debates_with_status("running"):
        if record.binding.platform == PLATFORM and record.binding.scope == team:
            await rt.manager.request_stop(record.id, UNINSTALLED, wait=0)


class _WorkspaceResults(SlackResults):
    """Results of resumed debates go out through their own workspace's front end (and token)."""

    def __init__(self, fronts: WorkspaceFronts) -> None:
        super().__init__(fronts.rt, fronts.client)
        self._fronts = fronts

    def follow(self, handle: DebateHandle, sink: SlackSink) -> None:
        front = self._fronts.known_front(handle.binding.scope)
        if front is not None:
            front.results.follow(handle, sink)
