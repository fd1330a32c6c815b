"""`/debate start`: every check (fast, before deferring, so refusals stay ephemeral), then the thread,
the debate and the reply with its link."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import discord

from adapters.discord.access import may_run_debates
from adapters.discord.controls import controls_view
from adapters.discord.delivery.desk import DebateDesk, Running
from adapters.discord.delivery.opening import close_unused, open_thread
from adapters.discord.delivery.sender import CONNECTION_ERRORS, NO_MENTIONS
from adapters.discord.delivery.sink import DiscordSink
from adapters.discord.delivery.webhooks import PersonaWebhooks, seats_taken
from adapters.discord.inbound.answers import NOT_ANSWERING, in_time, tell, until_discord_answers
from adapters.discord.inbound.documents import read_document, read_documents
from adapters.discord.install.invite import missing_permissions
from adapters.discord.render import messages
from adapters.discord.render.cards import clip
from adapters.discord.results import START_CARD_KEY, DiscordResults, public_card
from adapters.host import Host
from core.admission import Claim, StartRefused
from core.documents import Document
from core.errors import DebateError, StoreError
from core.outlasting import why_not_started
from core.ports import Binding
from core.spec import DebateSpec

log = logging.getLogger(__name__)

PLATFORM = "discord"
THREAD_KEY = "discord.thread_id"  # binding values: where the debate lives (its thread)
ORIGIN_KEY = "discord.origin_id"  # the channel it was started from (which gets the result)
THREAD_NAME_LIMIT = 100
FORMAT_OPTIONS: dict[str, frozenset[str]] = {
    "arena": frozenset({"duration", "exchanges", "humans"}),
    "oxford": frozenset({"humans"}),
    "council": frozenset({"humans"}),
    "panel": frozenset({"document1", "question_document"}),
}
"""The `/debate start` options each format takes (besides topic and format)."""
FILE_FORMATS = frozenset({"panel"})
"""Formats that post a file into the thread (the panel's Q&A)."""


@dataclass(frozen=True)
class StartRequest:
    """The options of `/debate start` as given (None: not given)."""

    topic: str
    format: str | None = None
    duration: int | None = None
    exchanges: int | None = None
    humans: str | None = None
    documents: tuple[discord.Attachment, ...] = ()
    question_document: discord.Attachment | None = None

    @property
    def has_files(self) -> bool:
        return bool(self.documents) or self.question_document is not None

    def misplaced(self) -> str | None:
        """A refusal when an option was given that the chosen format does not take."""
        fmt = (self.format or "arena").strip().lower()
        if fmt not in FORMAT_OPTIONS:
            return None  # the core names the formats there are
        given = {
            "duration": self.duration is not None,
            "exchanges": self.exchanges is not None,
            "humans": self.humans is not None,
            "document1": bool(self.documents),
            "question_document": self.question_document is not None,
        }
        wrong = [name for name, present in given.items() if present and name not in FORMAT_OPTIONS[fmt]]
        return messages.not_for_format(fmt, wrong, FORMAT_OPTIONS) if wrong else None

    def spec(self, documents: list[Document] | None = None, question: Document | None = None) -> DebateSpec:
        given = {
            "duration": self.duration,
            "exchanges_per_round": self.exchanges,
            "humans": self.humans,
            "documents": documents or None,
            "question_document": question,
        }
        return DebateSpec(
            format=self.format or "arena",
            topic=self.topic,
            options={k: v for k, v in given.items() if v is not None},
        )


@dataclass(frozen=True)
class _Plan:
    spec: DebateSpec | None
    """None until the attached files are read (that needs a download, after deferring)."""
    guild: discord.Guild
    channel: discord.TextChannel | discord.Thread
    user: discord.Member | discord.User


class Launcher:
    def __init__(self, rt: Host, desk: DebateDesk, webhooks: PersonaWebhooks) -> None:
        self.rt = rt
        self.desk = desk
        self.webhooks = webhooks
        self.settings = rt.config.discord
        self.results = DiscordResults(rt)

    async def start(self, interaction: discord.Interaction, request: StartRequest) -> None:
        plan = self._plan(interaction, request)
        if isinstance(plan, str):
            await tell(interaction, plan)
            return
        # files are checked only once downloaded: answer privately so a refusal stays private
        private = request.has_files
        where = {"scope": str(plan.guild.id), "channel": str(plan.channel.id), "user": str(plan.user.id)}
        try:  # the last check, claimed in the store: the same answer from every worker (deferred if slow)
            claim = await in_time(interaction, self.rt.admission.admit(platform=PLATFORM, **where), private)
        except DebateError as exc:  # refused (a debate already here, a cap), or the store could not answer
            await self._refuse_late(interaction, _not_admitted(exc), private=private)
            return
        async with claim:  # released (cooldown given back) unless the debate starts
            if not interaction.response.is_done():
                await interaction.response.defer(thinking=True, ephemeral=private)
            started = await self._open_and_start(request, plan, interaction, claim)
        if isinstance(started, str):  # said with the claim given back, however long Discord takes
            await self._refuse_late(interaction, started, private=private)
            return
        spec, thread, debate_id = started
        card = await self._start_card(interaction, messages.started(thread.id, spec.topic), debate_id)
        if request.has_files:  # that reply was private (files are checked late): the channel gets a card
            card = await public_card(plan.channel, messages.started(thread.id, spec.topic), debate_id)
        # the result, when it ends, to this channel and on the card (adapters/discord/results.py)
        self.results.follow(debate_id, channel=plan.channel, thread_id=thread.id, card=card)
        if card is not None and not card.flags.ephemeral:
            try:
                await self.rt.store.set_binding_value(
                    debate_id, START_CARD_KEY, f"{card.channel.id}:{card.id}"
                )
            except StoreError as exc:  # taken over meanwhile, say: it goes on, without its result post
                log.warning("debate %s: could not record its start card: %s", debate_id, exc)

    async def _open_and_start(
        self, request: StartRequest, plan: _Plan, interaction: discord.Interaction, claim: Claim
    ) -> tuple[DebateSpec, discord.Thread, str] | str:
        """The files read, the thread opened and the debate started under `claim`: its spec, thread
        and id, or why not. The caller says why once the claim is given back, so a refusal waiting
        for Discord to take it does not keep the channel from another start meanwhile."""
        try:
            spec = plan.spec or await self._spec_with_files(request)
        except DebateError as exc:
            return messages.option_error(str(exc))
        try:
            thread = await self._thread(spec, plan)
        except (discord.HTTPException, *CONNECTION_ERRORS) as exc:
            log.warning("could not open a debate thread in %s: %r", plan.channel.id, exc)
            return messages.cannot_open_thread(exc)
        try:
            debate_id = await self._launch(interaction, spec, plan, thread, claim)
        except DebateError as exc:
            if thread is not plan.channel:  # the thread opened for it stays empty
                await close_unused(thread, f"{messages.NOT_STARTED} {why_not_started(exc)}")
            return why_not_started(exc)
        return spec, thread, debate_id

    # --- checks (synchronous: all of them fit well inside the 3 s before a reply is due) --------

    def _plan(self, interaction: discord.Interaction, request: StartRequest) -> _Plan | str:
        guild, channel, user = interaction.guild, interaction.channel, interaction.user
        if guild is None or not isinstance(channel, discord.TextChannel | discord.Thread):
            return messages.WRONG_PLACE
        roles = self.settings.starter_roles
        if not may_run_debates(user, interaction.permissions, roles):
            return messages.not_allowed(roles)
        misplaced = request.misplaced()
        if misplaced is not None:
            return misplaced
        try:
            prepared = None if request.has_files else self.rt.manager.prepare(request.spec())
        except DebateError as exc:
            return messages.option_error(str(exc))
        spec = prepared.spec if prepared is not None else None
        fmt = prepared.spec.format if prepared is not None else "panel"  # only the panel takes files
        humans = getattr(prepared.options, "humans", "off") if prepared is not None else "off"
        missing = missing_permissions(
            interaction.app_permissions,
            new_thread=not isinstance(channel, discord.Thread),
            # people vote with reactions only when the debate lets them and ballots are not buttons
            ballots=humans != "off" and self.settings.ballot == "reactions",
            files=fmt in FILE_FORMATS,
        )
        if missing:
            return messages.bot_lacks(missing)
        return _Plan(spec, guild, channel, user)

    # --- doing it ------------------------------------------------------------------------------

    async def _spec_with_files(self, request: StartRequest) -> DebateSpec:
        limit = self.rt.core.formats.panel.max_document_chars
        documents = await read_documents(request.documents, limit=limit)
        question = request.question_document
        spec = request.spec(documents, await read_document(question, limit=limit) if question else None)
        return self.rt.manager.prepare(spec).spec

    async def _thread(self, spec: DebateSpec, plan: _Plan) -> discord.Thread:
        if isinstance(plan.channel, discord.Thread):
            return plan.channel
        return await open_thread(  # waits Discord out; a thread it made with its answer lost is used
            plan.channel,
            clip(spec.topic, THREAD_NAME_LIMIT),
            archive_minutes=self.settings.thread_archive_minutes,
            reason=f"Rostra debate started by {plan.user}",
        )

    async def _launch(
        self,
        interaction: discord.Interaction,
        spec: DebateSpec,
        plan: _Plan,
        thread: discord.Thread,
        claim: Claim,
    ) -> str:
        me = interaction.client.user
        assert me is not None
        sink = DiscordSink(
            thread=thread,
            webhooks=self.webhooks,
            taken=await seats_taken(self.rt.store, thread),  # other workers' debates too
            owner_id=me.id,
            settings=self.settings,
            store=self.rt.store,
            cards=self.desk.cards,
            on_finished=self._finished,
            pictures=self.rt.config.results.picture,
        )
        binding = Binding(
            platform=PLATFORM, scope=str(plan.guild.id), channel=str(thread.id), started_by=str(plan.user.id)
        )
        # where it lives, stored with the debate itself: a restart or another worker finds its thread
        values = {"discord.guild_id": str(plan.guild.id), THREAD_KEY: str(thread.id)}
        values |= {ORIGIN_KEY: str(plan.channel.id), **sink.placement}
        try:
            handle = await self.rt.manager.start(spec, sink, binding=binding, claim=claim.key, values=values)
        except DebateError:
            await sink.aclose()
            raise
        sink.attach(handle)
        claim.started()
        self.desk.add(Running(handle, sink))
        return handle.debate_id

    @staticmethod
    async def _start_card(
        interaction: discord.Interaction, text: str, debate_id: str
    ) -> discord.Message | None:
        """The answer that says the debate started, with its Stop, Status and Transcript buttons
        (adapters/discord/controls.py), waiting Discord out; None if it never took it (the debate
        runs all the same, its result still posted)."""
        try:
            return await until_discord_answers(
                lambda: interaction.followup.send(
                    text, allowed_mentions=NO_MENTIONS, view=controls_view(debate_id), wait=True
                ),
                lambda: interaction.edit_original_response(  # what that first follow-up is
                    content=text, allowed_mentions=NO_MENTIONS, view=controls_view(debate_id)
                ),
                what="the start card",
            )
        except discord.HTTPException as exc:
            log.warning("debate %s: could not answer its start: %s", debate_id, exc)
        except NOT_ANSWERING as exc:
            log.warning("debate %s: Discord never took its start card: %r", debate_id, exc)
        return None

    def _finished(self, debate_id: str) -> None:
        self.desk.finished(debate_id)
        self.results.ended(debate_id)

    @staticmethod
    async def _refuse_late(interaction: discord.Interaction, text: str, *, private: bool) -> None:
        """A refusal to the person alone: before any answer, said privately; after deferring, a
        private "thinking…" reply becomes the refusal, a public one is withdrawn and it follows."""
        if not interaction.response.is_done():
            await tell(interaction, text)
            return
        if private:
            await until_discord_answers(
                lambda: interaction.edit_original_response(content=text, allowed_mentions=NO_MENTIONS),
                what="a refusal",
            )
            return
        # the first message after a public defer is public (it replaces "thinking…"): settle that one
        # with no detail, tell the person why privately, then withdraw the public line
        await until_discord_answers(
            lambda: interaction.edit_original_response(
                content=messages.NOT_STARTED, allowed_mentions=NO_MENTIONS
            ),
            what="a refusal",
        )
        # (a try Discord answered 5xx may have landed: a second private note at worst)
        await until_discord_answers(
            lambda: interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS),
            what="a refusal",
        )
        try:
            await interaction.delete_original_response()
        except discord.HTTPException as exc:
            log.warning("could not withdraw the public thinking reply: %s", exc)


def _not_admitted(error: DebateError) -> str:
    """Why a start was not admitted; a debate already in the channel is named with its thread's link.
    Asked of the store, not of this process, so every worker gives the same answer."""
    if isinstance(error, StartRefused) and error.refused.why == "running" and error.refused.channel.isdigit():
        return messages.busy_channel(int(error.refused.channel), error.refused.topic)
    return why_not_started(error)
