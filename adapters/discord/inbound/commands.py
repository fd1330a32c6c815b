"""The `/debate` command group: start, stop, status, transcript, personas."""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

import discord
from discord import app_commands

from adapters.card_text import HUMANS_CHOICES
from adapters.discord.access import can_see, may_stop
from adapters.discord.delivery.sender import NO_MENTIONS, embed_of
from adapters.discord.inbound.answers import in_time, tell, until_discord_answers
from adapters.discord.launch import ORIGIN_KEY, PLATFORM, THREAD_KEY, Launcher, StartRequest
from adapters.discord.render import messages
from adapters.discord.render.cards import clip, personas_card
from adapters.host import Host
from adapters.stop_request import stop_running
from adapters.stored_debates import latest_debate, named_debate
from adapters.transcript_files import transcript_files
from core.errors import StoreUnavailable
from core.formats import FORMATS
from core.outlasting import STATUS_UNKNOWN
from core.ports import DebateRecord
from core.settings import FormatsSettings

log = logging.getLogger(__name__)

CHOICE_NAME_LIMIT = 100
CHOICES_LIMIT = 25
TRANSCRIPT_SEARCH = 100
MAX_TOPIC_OPTION = 2000  # the most limits.max_topic_length allows; the configured value is set below
# arena's duration and exchanges, as core.settings.ArenaSettings bounds them (and the descriptions say)
MIN_DURATION, MAX_DURATION = 30, 7200
MIN_EXCHANGES, MAX_EXCHANGES = 1, 10

HUMANS_FORMATS = {"off": "", "tiebreak": " (arena, council)", "vote": " (arena; the audience in oxford)"}
HUMAN_CHOICES = [
    app_commands.Choice(name=f"{value}: {label}{HUMANS_FORMATS[value]}", value=value)
    for value, label in HUMANS_CHOICES.items()
]


def _thread_of(record: DebateRecord | None, channel_id: int | None) -> int:
    """The debate's thread (a Discord debate is bound to its thread), else the channel asked in."""
    thread = record.binding.channel if record is not None else ""
    return int(thread) if thread.isdigit() else channel_id or 0


def format_choices() -> list[app_commands.Choice[str]]:
    return [
        app_commands.Choice(name=f"{name}: {cls.description}"[:CHOICE_NAME_LIMIT], value=name)
        for name, cls in FORMATS.items()
    ]


@dataclass(frozen=True)
class Here:
    """The debate running in a channel or thread, as the controls need it."""

    debate_id: str
    thread_id: int


class DebateCommands:
    def __init__(self, rt: Host, launcher: Launcher) -> None:
        self.rt = rt
        self.launcher = launcher
        self.settings = rt.config.discord

    async def _here(self, channel_id: int | None) -> Here | None:
        """The debate running in this thread or started from this channel, on any worker: the store's
        answer, the same on every worker (a copy here another worker took over is not asked)."""
        if channel_id is None:
            return None
        record = await self.rt.manager.find_running(platform=PLATFORM, channel=str(channel_id))
        if record is None:
            return None
        return Here(record.id, _thread_of(record, channel_id))

    async def stop(self, interaction: discord.Interaction) -> None:
        """The channel's debate, stopped if this person may (`adapters/stop_request.py`)."""
        user, roles = interaction.user, self.settings.starter_roles

        async def refusal(record: DebateRecord) -> str | None:
            starter = record.binding.started_by
            allowed = may_stop(user, interaction.permissions, roles, starter=starter)
            return None if allowed else messages.not_starter(starter, roles)

        stop = stop_running(
            self.rt.manager,
            lambda: self.rt.manager.find_running(platform=PLATFORM, channel=str(interaction.channel_id)),
            refusal,
            reason=f"stopped by {user.display_name}",
            tell=lambda text: tell(interaction, text),
        )
        done = await in_time(interaction, stop)
        thread = _thread_of(done.record, interaction.channel_id)
        said = {"stopped": messages.stopping, "requested": messages.stop_requested}.get(done.outcome)
        ended = messages.ALREADY_ENDING if done.outcome == "already_ended" else messages.NO_DEBATE_HERE
        await tell(interaction, done.refusal or (said(thread) if said else ended))

    async def status(self, interaction: discord.Interaction) -> None:
        await tell(interaction, await in_time(interaction, self._status(interaction.channel_id)))

    async def _status(self, channel_id: int | None) -> str:
        try:
            found = await self._here(channel_id)
            view = await self.rt.manager.status_of(found.debate_id) if found is not None else None
        except StoreUnavailable:
            return STATUS_UNKNOWN
        return messages.status_text(view, found.thread_id) if found and view else messages.NO_DEBATE_HERE

    async def transcript(self, interaction: discord.Interaction, debate_id: str | None) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        record = await self._stored(interaction, debate_id)
        if record is None:
            text = messages.no_such_debate(debate_id) if debate_id else messages.NO_DEBATE_STORED
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
            return
        made = await transcript_files(record, await self.rt.store.events(record.id))
        caption = messages.transcript_caption(record.topic, record.id)

        def files() -> list[discord.File]:  # each try sends them afresh
            return [discord.File(io.BytesIO(f.content.encode("utf-8")), filename=f.filename) for f in made]

        await until_discord_answers(  # Discord failing: tried again, as an edit of "thinking…"
            lambda: interaction.followup.send(
                caption, files=files(), ephemeral=True, allowed_mentions=NO_MENTIONS
            ),
            lambda: interaction.edit_original_response(
                content=caption, attachments=files(), allowed_mentions=NO_MENTIONS
            ),
            what="a transcript",
        )

    async def _stored(self, interaction: discord.Interaction, debate_id: str | None) -> DebateRecord | None:
        """The debate asked for (in this server only), else the latest one of this channel or thread."""
        guild_id = str(interaction.guild_id)
        if debate_id:
            record = await named_debate(self.rt, debate_id, platform=PLATFORM, scope=guild_id)
            if record is None:
                return None
            return record if await self._may_read(interaction, record) else None
        found = await self._here(interaction.channel_id)
        if found is not None:
            return await self.rt.store.get_debate(found.debate_id)
        here = str(interaction.channel_id)

        async def started_here(record: DebateRecord) -> bool:
            return (await self.rt.store.binding_values(record.id)).get(ORIGIN_KEY) == here

        return await latest_debate(
            self.rt,
            platform=PLATFORM,
            scope=guild_id,
            channel=here,
            started_here=started_here,
            recent=TRANSCRIPT_SEARCH,
        )

    async def transcript_choices(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Recent debates of this server the person can see, matching what they typed (id or topic)."""
        typed = current.strip().casefold()
        guild_id = str(interaction.guild_id)
        choices: list[app_commands.Choice[str]] = []
        for record in await self.rt.store.list_debates(TRANSCRIPT_SEARCH):
            if record.binding.platform != PLATFORM or record.binding.scope != guild_id:
                continue
            if typed and typed not in record.id and typed not in record.topic.casefold():
                continue
            if not await self._may_read(interaction, record):
                continue
            label = f"{record.id} · {record.topic}"
            choices.append(app_commands.Choice(name=clip(label, CHOICE_NAME_LIMIT), value=record.id))
            if len(choices) == CHOICES_LIMIT:
                break
        return choices

    async def _may_read(self, interaction: discord.Interaction, record: DebateRecord) -> bool:
        """Whether the asker can see the channel the debate was held in (else it is not theirs to
        read, and nothing about it is said)."""
        guild = interaction.guild
        if guild is None:
            return False
        values = await self.rt.store.binding_values(record.id)
        for key in (values.get(ORIGIN_KEY), values.get(THREAD_KEY), record.binding.channel):
            channel = guild.get_channel_or_thread(int(key)) if key and key.isdigit() else None
            if channel is not None:
                return can_see(interaction.user, channel)
        return False

    async def personas(self, interaction: discord.Interaction) -> None:
        seats = cast_seats(self.rt.core.formats)
        cast = [
            (p.ref(), " · ".join(seats.get(pid, ["not seated"])), p.voice)
            for pid, p in self.rt.core.personas.items()
        ]
        await interaction.response.send_message(
            embed=embed_of(personas_card(cast)), ephemeral=True, allowed_mentions=NO_MENTIONS
        )


def cast_seats(formats: FormatsSettings) -> dict[str, list[str]]:
    """persona id → the seats it has in each format's configured cast."""
    seats: dict[str, list[str]] = {}

    def seat(persona_id: str | None, text: str) -> None:
        if persona_id is not None:
            seats.setdefault(persona_id, []).append(text)

    arena, oxford, council, panel = formats.arena, formats.oxford, formats.council, formats.panel
    for pid in arena.pool:
        seat(pid, "arena proposition pool")
    seat(arena.opposition, "arena opposition")
    seat(arena.moderator, "arena moderator")
    for pid, role in (
        (oxford.proposer, "proposer"),
        (oxford.critic, "critic"),
        (oxford.moderator, "moderator"),
        (oxford.judge, "judge"),
    ):
        seat(pid, f"oxford {role}")
    for member in council.agents:
        seat(member.persona, "council member")
    seat(council.moderator, "council moderator")
    for pid in panel.agents:
        seat(pid, "panellist")
    seat(panel.synthesiser, "panel synthesiser")
    return seats


def build_group(commands: DebateCommands) -> app_commands.Group:
    group = app_commands.Group(name="debate", description="Debates between AI personas", guild_only=True)

    @group.command(name="start", description="Start a debate between AI personas in a new thread")
    @app_commands.describe(
        topic="the motion to debate, e.g. Should cities ban cars?",
        format="the debate format (default arena)",
        duration="arena: seconds of debate time, votes excluded (30-7200; default from config)",
        exchanges="arena: exchanges per round before each vote (1-10; default from config)",
        humans="arena, oxford, council: how people in the thread vote (default from config)",
        document1="panel: the first panellist's document (.txt or .md)",
        document2="panel: the second panellist's document",
        document3="panel: the third panellist's document",
        question_document="panel: draw the questions from this document (the topic is its subject)",
    )
    @app_commands.choices(format=format_choices(), humans=HUMAN_CHOICES)
    async def start(
        interaction: discord.Interaction,
        topic: app_commands.Range[str, 1, MAX_TOPIC_OPTION],
        format: str | None = None,
        duration: app_commands.Range[int, MIN_DURATION, MAX_DURATION] | None = None,
        exchanges: app_commands.Range[int, MIN_EXCHANGES, MAX_EXCHANGES] | None = None,
        humans: str | None = None,
        document1: discord.Attachment | None = None,
        document2: discord.Attachment | None = None,
        document3: discord.Attachment | None = None,
        question_document: discord.Attachment | None = None,
    ) -> None:
        documents = tuple(d for d in (document1, document2, document3) if d is not None)
        request = StartRequest(topic, format, duration, exchanges, humans, documents, question_document)
        await commands.launcher.start(interaction, request)

    # the client enforces the configured topic length too (the server checks it again)
    start._params["topic"].max_value = commands.rt.core.limits.max_topic_length

    @group.command(name="stop", description="End the debate in this channel now (with its closing card)")
    async def stop(interaction: discord.Interaction) -> None:
        await commands.stop(interaction)

    @group.command(name="status", description="Phase, speaker, round and time left of the debate here")
    async def status(interaction: discord.Interaction) -> None:
        await commands.status(interaction)

    @group.command(
        name="transcript", description="The debate here (or by id) as Markdown and as a page to share"
    )
    @app_commands.describe(debate="a debate id from a closing card (default: the latest one here)")
    async def transcript(interaction: discord.Interaction, debate: str | None = None) -> None:
        await commands.transcript(interaction, debate)

    @transcript.autocomplete("debate")
    async def debate_ids(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return await commands.transcript_choices(interaction, current)

    @group.command(name="personas", description="The cast of personas")
    async def personas(interaction: discord.Interaction) -> None:
        await commands.personas(interaction)

    return group
