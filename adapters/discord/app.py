"""The Discord bot: the `/debate` commands, reaction votes, and clean shutdown of deliveries."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import discord
from discord import app_commands
from discord.ext import commands

from adapters.delivery import fence as request_fence
from adapters.discord.ballots.buttons import BallotButton
from adapters.discord.ballots.reactions import is_person
from adapters.discord.ballots.remote import RemoteVotes
from adapters.discord.controls import CardButton
from adapters.discord.delivery.desk import DebateDesk
from adapters.discord.delivery.sender import NO_MENTIONS
from adapters.discord.delivery.webhooks import PersonaWebhooks
from adapters.discord.inbound.answers import NOT_ANSWERING, tell
from adapters.discord.inbound.commands import DebateCommands, build_group
from adapters.discord.inbound.once import OnceTree
from adapters.discord.launch import Launcher
from adapters.discord.resume import Resumer
from adapters.host import Host
from adapters.metering import platform_trace

log = logging.getLogger(__name__)

OOPS = "Something went wrong on Rostra's side; the details are in its log. Try again in a moment."
DISCORD_STOPPED_ANSWERING = "Discord stopped answering me partway through; try again in a moment."


def bot_intents() -> discord.Intents:
    """No privileged intents: guilds (channels, threads, roles) and reactions (people's votes)."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_reactions = True
    return intents


class RostraBot(commands.Bot):
    def __init__(self, rt: Host) -> None:
        shards = rt.config.discord  # several processes split the servers: discord.py's sharding
        webhooks = PersonaWebhooks(shards.webhook_name)
        pacing = webhooks.pacing(lambda: self.application_id)  # every request, as it is sent
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=bot_intents(),
            allowed_mentions=NO_MENTIONS,
            help_command=None,
            tree_cls=OnceTree,  # each interaction answered by one worker (inbound/once.py)
            shard_id=shards.shard_id,
            shard_count=shards.shard_count,
            # requests, 429s, retries (metering); each asks the debate's lease fence, retries included
            http_trace=request_fence.guard(platform_trace("discord", paced_by=pacing)),
        )
        self.rt = rt
        self.settings = rt.config.discord
        self.desk = DebateDesk()
        self.webhooks = webhooks
        launcher = Launcher(rt, self.desk, self.webhooks)
        self.debate_commands = DebateCommands(rt, launcher)
        self.resumer = Resumer(self, rt, self.desk, self.webhooks)
        self.resumer.results = launcher.results  # resumed debates' results too (results.py)
        self.remote_votes = RemoteVotes(rt)  # votes on debates another process runs (ballots/remote.py)
        self._resuming: asyncio.Task[None] | None = None
        self._rereading: asyncio.Task[None] | None = None  # the vote cards, after a new gateway session
        self.tree.error(self._command_failed)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(CardButton, BallotButton)  # card and ballot buttons, after restarts too
        self.tree.add_command(build_group(self.debate_commands), override=True)
        guild_id = self.settings.dev_guild_id
        if guild_id is not None:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d commands to the dev guild %s", len(synced), guild_id)
        else:
            synced = await self.tree.sync()
            log.info("synced %d commands globally (may take a while to show up)", len(synced))

    async def on_ready(self) -> None:
        log.info("logged in as %s in %d servers", self.user, len(self.guilds))
        if self._resuming is None:  # READY comes again after a reconnect: resume only once
            self._resuming = asyncio.create_task(self._resume(), name="discord-resume")
        elif self._rereading is None or self._rereading.done():
            # a new gateway session, not a resumed one: what people did on the cards meanwhile never
            # reached this process (Discord replays events only to a resumed session)
            self._rereading = asyncio.create_task(self._read_cards_again(), name="discord-reread-cards")

    async def _read_cards_again(self) -> None:
        try:
            await self.desk.read_cards_again()
            await self.remote_votes.cards_missed({str(guild.id) for guild in self.guilds})
        except Exception:
            log.exception("could not read the vote cards again after the gateway reconnected")

    async def _resume(self) -> None:
        try:
            await self.resumer.run()
        except Exception:
            log.exception("could not resume the debates cut short by the last stop")

    @property
    def resuming(self) -> asyncio.Task[None] | None:
        """Resuming the debates a restart cut short (started once the bot is ready)."""
        return self._resuming

    async def close(self) -> None:
        for task in (self._resuming, self._rereading):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.debate_commands.launcher.results.aclose()
        await self.desk.aclose()
        await super().close()

    # --- people's votes ------------------------------------------------------------------------

    def _may_vote(self, payload: discord.RawReactionActionEvent) -> bool:
        """A person's reaction where reactions are the ballot (with buttons, clicks vote)."""
        me = self.user.id if self.user is not None else None
        bot = payload.member is not None and payload.member.bot
        return self.settings.ballot != "buttons" and is_person(payload.user_id, is_bot=bot, me=me)

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        if not self._may_vote(payload):
            return
        card = self.desk.cards.get(payload.message_id)
        name = payload.member.display_name if payload.member is not None else str(payload.user_id)
        if card is None:  # perhaps a card of a debate another process runs
            await self.remote_votes.reacted(
                payload.channel_id, payload.message_id, str(payload.user_id), name, str(payload.emoji)
            )
            return
        await card.reacted(str(payload.user_id), name, str(payload.emoji))

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        if not self._may_vote(payload):
            return
        card = self.desk.cards.get(payload.message_id)
        if card is None:
            await self.remote_votes.unreacted(
                payload.channel_id, payload.message_id, str(payload.user_id), str(payload.emoji)
            )
            return
        await card.unreacted(str(payload.user_id), str(payload.emoji))

    # --- errors --------------------------------------------------------------------------------

    async def _command_failed(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        log.error(
            "/%s failed", interaction.command.qualified_name if interaction.command else "?", exc_info=error
        )
        cause = getattr(error, "original", error)  # what the command raised
        text = DISCORD_STOPPED_ANSWERING if isinstance(cause, NOT_ANSWERING) else OOPS
        try:
            await tell(interaction, text)  # a follow-up waits Discord out
        except (discord.HTTPException, *NOT_ANSWERING):
            log.warning("could not tell the person that /debate failed")


def create_bot(rt: Host) -> RostraBot:
    """The bot for `rt`, not yet started: `async with bot: await bot.start(token)`."""
    discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False  # no voice: no warnings
    return RostraBot(rt)
