"""The Slack front end: each request read as a command and handed to its feature (launch, controls,
votes, help), and the parts a workspace's debates share (its sinks, results, resuming).

A debate is bound to its channel (`Binding.channel` = the channel id): one debate per channel, and
it lives in the thread under the bot's opening card. `stop`, `status` and votes find it there.
"""

from __future__ import annotations

import asyncio
import logging
from typing import assert_never

from slack_sdk.web.async_client import AsyncWebClient

from adapters.host import Host
from adapters.slack.ballots.remote import RemoteVotes
from adapters.slack.controls.actions import Controls
from adapters.slack.controls.transcripts import PLATFORM
from adapters.slack.delivery.desk import SlackDesk
from adapters.slack.delivery.sink import SlackSink
from adapters.slack.inbound.commands import (
    Help,
    Invalid,
    Personas,
    Start,
    Status,
    Stop,
    Transcript,
    parse_command,
)
from adapters.slack.inbound.people import bot_users_of
from adapters.slack.inbound.replies import Replies
from adapters.slack.inbound.requests import ReactionRequest, Request
from adapters.slack.launch import Launcher
from adapters.slack.render import messages
from adapters.slack.results import SlackResults
from adapters.slack.resume import ask_bot_user_id, reattach_thread, resume_debates
from core.clock import Clock
from core.ports import DebateRecord
from core.session import DebateHandle

log = logging.getLogger(__name__)


class SlackFrontEnd:
    def __init__(self, rt: Host, client: AsyncWebClient) -> None:
        self.rt = rt
        self.client = client
        self.settings = rt.config.slack
        self.desk = SlackDesk()
        self.results = SlackResults(rt, client)  # each debate's result to its channel at the end
        self.launcher = Launcher(rt, client, self.settings, self.desk, self.results)
        self.controls = Controls(rt, client, self.settings)
        self.remote_votes = RemoteVotes(rt)  # votes on debates another worker runs
        self.bots = bot_users_of(client)  # other apps' bot users: their reactions are no votes

    @property
    def countdown_clock(self) -> Clock:
        """The clock vote cards count down by (people's time, not debate time)."""
        return self.launcher.countdown_clock

    @countdown_clock.setter
    def countdown_clock(self, clock: Clock) -> None:
        self.launcher.countdown_clock = clock

    # --- requests -------------------------------------------------------------------------------

    async def handle(self, request: Request, replies: Replies, *, bot_user_id: str | None) -> None:
        command = parse_command(request.text, slash=request.slash)
        match command:
            case Start():
                await self.launcher.start(request, command, replies, bot_user_id)
            case Stop():
                await self.controls.stop(request, replies)
            case Status():
                await self.controls.status(request, replies)
            case Transcript():
                await self.controls.transcript(request, command.debate_id, replies)
            case Personas():
                await replies.say(messages.personas_text(self.rt.core.personas))
            case Help():
                await replies.say(
                    messages.help_text(
                        self.rt.manager.formats,
                        command.unknown,
                        document_chars=self.rt.core.formats.panel.max_document_chars,
                    )
                )
            case Invalid():
                await replies.say(messages.refusal(command.message))
            case _:
                assert_never(command)

    async def reaction(self, reaction: ReactionRequest, *, bot_user_id: str | None) -> None:
        if reaction.user == bot_user_id or self.settings.ballot == "buttons":  # buttons: clicks vote
            return
        if await self.bots.is_bot(reaction.user):
            return
        sink = self.desk.sink_in(reaction.channel)
        if sink is not None and sink.shows_vote(reaction.ts):
            await sink.reaction(
                reaction.ts, reaction.user, reaction.name, added=reaction.added, at=reaction.at
            )
        elif sink is None:  # perhaps a card of a debate another worker runs (ballots/remote.py)
            await self.remote_votes.reaction(
                reaction.channel,
                reaction.ts,
                reaction.user,
                reaction.name,
                added=reaction.added,
                name=None,
                at=reaction.at,
            )

    # --- the Start modal starts through the same path -------------------------------------------

    async def start(
        self, request: Request, command: Start, replies: Replies, *, bot_user_id: str | None
    ) -> None:
        """Start a debate from a request already read (the Start modal uses this: the same path)."""
        await self.launcher.start(request, command, replies, bot_user_id)

    async def refusal_for(self, request: Request) -> str | None:
        """Why the person may not start debates, or None (the Start modal says it inline)."""
        return await self.launcher.refusal_for(request.user)

    def check(self, request: Request, command: Start) -> None:
        """Raise DebateError or AttachmentError when the request would be refused (nothing is fetched)."""
        self.launcher.checked(request, command)

    # --- after a restart ------------------------------------------------------------------------

    async def resume(self) -> list[DebateHandle]:
        """Pick up every Slack debate a restart cut short, each in its own thread; their handles."""
        resuming = self.launcher.resuming = asyncio.Event()
        try:
            return await resume_debates(self)
        finally:
            resuming.set()

    async def reattach(
        self, record: DebateRecord, values: dict[str, str], bot_user_id: str | None
    ) -> SlackSink | None:
        """A sink for the debate's existing thread, or None when that thread is gone."""
        return await reattach_thread(
            self.rt, self.client, self.settings, self.desk, self.countdown_clock, record, values, bot_user_id
        )

    def forget(self, sink: SlackSink) -> None:
        self.desk.forget(sink)

    async def read_cards_again(self) -> None:
        """Every delivering debate's open vote cards read again (events may have been missed), and
        the other workers' debates' by their owners (Slack spreads events over every connection)."""
        for sink in self.desk.delivering():
            await sink.read_cards_again()
        await self.remote_votes.cards_missed(None)

    async def bot_user_id(self) -> str | None:
        return await ask_bot_user_id(self.client)

    # --- lifecycle ------------------------------------------------------------------------------

    async def wait_idle(self) -> None:
        """Wait until no Slack debate runs and every sink has delivered its last event."""
        while True:
            running = [h for h in self.rt.manager.running() if h.binding.platform == PLATFORM]
            for handle in running:
                await handle.wait()
            live = self.desk.delivering()
            for sink in live:
                await sink.delivered()
            await self.results.wait()
            if not running and not live:
                return

    async def aclose(self) -> None:
        """Stop delivering (the debates themselves belong to the runtime)."""
        await self.results.aclose()
        await self.desk.aclose()
