"""What the bot says to people outside the debate itself: replies, refusals and delivery notices."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import discord

from adapters.discord.render.cards import md
from core.session import DebateStatusView
from core.transcript import minutes

NO_DEBATE_HERE = "No debate is running here. Start one with `/debate start`."
NO_DEBATE_STORED = "No debate has run here yet. Start one with `/debate start`."
WRONG_PLACE = "Debates run in a server's text channels and threads: run `/debate start` in one of those."
ALREADY_ENDING = "This debate is already ending; its closing card follows in the thread."
NOT_STARTED = "No debate was started."


def not_allowed(roles: Sequence[str]) -> str:
    names = ", ".join(f"`{r}`" for r in roles)
    return (
        f"You can't start or stop debates here: that takes one of the roles {names} or the"
        " Manage Threads permission."
    )


def not_starter(starter_id: str, roles: Sequence[str]) -> str:
    if not roles:
        return (
            f"Only <@{starter_id}> (who started this debate) or a member with the Manage Threads"
            " permission can stop it."
        )
    return f"Only <@{starter_id}> (who started this debate) can stop it. " + not_allowed(roles)


def busy_channel(thread_id: int, topic: str) -> str:
    return (
        f"A debate is already running in this channel (<#{thread_id}>: “{md(topic)}”); stop it first or"
        " start one in another channel."
    )


def cannot_open_thread(error: Exception) -> str:
    """Why no thread could be opened: permissions only when Discord said so (403)."""
    if not isinstance(error, discord.HTTPException):  # no answer at all
        name = type(error).__name__
        return f"Discord didn't answer when I opened the debate's thread ({name}); nothing started."
    detail = error.text or str(error.status)
    if error.status == 403:
        return (
            f"I couldn't open a thread here ({detail}). Give Rostra the Create Public Threads and Send"
            " Messages in Threads permissions in this channel, or run `/debate start` inside a thread."
        )
    if error.status == 429:
        return f"Discord is rate-limiting thread creation here ({detail}); try again in a minute."
    if error.status >= 500:
        return (
            f"Discord didn't answer when I opened the debate's thread ({error.status}: {detail});"
            " nothing started. Try again in a moment."
        )
    return f"Discord refused to open a thread here ({error.status}: {detail}); try again in a moment."


def started(thread_id: int, topic: str) -> str:
    return f"🎙️ Debate started: **{md(topic)}** → <#{thread_id}>"


def stopping(thread_id: int) -> str:
    return f"Stopping the debate; its closing card follows in <#{thread_id}>."


def stop_requested(thread_id: int) -> str:
    return (
        f"Asked the debate to stop; it ends within moments, and its closing card follows in <#{thread_id}>."
    )


def no_webhooks(channel_id: int) -> str:
    return (
        f"⚠️ Personas speak as Rostra in this debate because I can't manage webhooks in <#{channel_id}>."
        " Give Rostra the **Manage Webhooks** permission there to let each persona post under its own"
        " name and avatar."
    )


_OPTION_NAMES = {"document1": "document1–3"}


def not_for_format(fmt: str, wrong: Sequence[str], takes: Mapping[str, Collection[str]]) -> str:
    """Options given that `fmt` does not take, which formats take them, and what `fmt` takes."""
    names = " and ".join(f"`{_OPTION_NAMES.get(w, w)}`" for w in wrong)
    homes = sorted({f for f, options in takes.items() if any(w in options for w in wrong)})
    where = ""
    if homes:
        verb = "takes" if len(homes) == 1 else "take"
        where = f" ({', '.join(homes)} {verb} {'it' if len(wrong) == 1 else 'them'})"
    own = sorted(takes.get(fmt, ()))
    also = f" It takes {', '.join(f'`{_OPTION_NAMES.get(o, o)}`' for o in own)}." if own else ""
    article = "An" if fmt[:1] in "aeiou" else "A"
    return f"{article} {fmt} debate doesn't take {names}{where}.{also}"


def option_error(message: str) -> str:
    """A SpecError from the core, in the slash command's own option names."""
    return message.replace("exchanges_per_round", "exchanges")


def status_text(view: DebateStatusView, thread_id: int | None) -> str:
    lines = [f"**{md(view.topic)}** ({view.format}, debate `{view.debate_id}`)"]
    where = f" in <#{thread_id}>" if thread_id is not None else ""
    speaker = f" · speaking: {view.speaker}" if view.speaker else ""
    lines.append(f"Phase: {view.phase} · round {view.round}{speaker}{where}")
    left = f" · {minutes(view.remaining)} left" if view.remaining is not None else ""
    lines.append(f"⏱ {minutes(view.elapsed)} elapsed{left} · {view.turns} turns so far")
    return "\n".join(lines)


def transcript_caption(topic: str, debate_id: str) -> str:
    return f"📜 Transcript of **{md(topic)}** (debate `{debate_id}`)"


def bot_lacks(labels: Sequence[str]) -> str:
    names = ", ".join(f"**{label}**" for label in labels)
    return f"I can't run a debate here: I'm missing {names} in this channel. Ask an admin to grant it."


def no_such_debate(debate_id: str) -> str:
    return f"No debate `{debate_id}` has run in this server."
