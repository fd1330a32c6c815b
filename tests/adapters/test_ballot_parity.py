"""The same reactions on a vote card give the same votes on Discord and on Slack.

Each platform's wiring (Discord's card ballot behind its listener's filter of bots, Slack's `HumanVotes`)
is driven with one reaction sequence in a real debate, and the people's votes the debate records
must be the same on both, and the ones the rule says: the newest vote reaction still on the card.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from adapters.discord.ballots.reactions import CardBallot, is_person
from adapters.slack.ballots.reactions import HumanVotes
from adapters.slack.render.emoji import option_reactions
from bot.runtime import Runtime
from core.events import Event, HumanVoteOpened, VotingStarted
from core.models import VoteOption
from core.session import DebateHandle
from tests.core.runs import run_debate

BOT = "9"  # the bot itself: its reactions are the ballot


@dataclass(frozen=True)
class React:
    person: str
    option: str  # an option key, or "party" for an emoji that is no option
    added: bool = True


def r(person: str, option: str) -> React:
    return React(person, option)


def u(person: str, option: str) -> React:
    return React(person, option, added=False)


EARLY = [
    r(BOT, "keep"),
    r(BOT, "replace"),
    r("5", "replace"),
    r("6", "keep"),
    r("6", "replace"),
    u("6", "replace"),
]
"""Before the window opens: the bot seeds the ballot; people react early (remembered, cast later)."""

LIVE = [
    *[r("1", "keep"), r("1", "replace"), u("1", "replace")],  # keep → replace → remove replace: keep
    *[r("2", "keep"), r("2", "keep"), r("2", "replace"), r("2", "replace")],  # duplicates: replace
    *[r("3", "keep"), u("3", "keep")],  # withdrawn
    *[r("4", "party"), r("4", "replace"), r("4", "party"), u("4", "party")],  # other emoji: replace
    *[r("7", "keep"), r("7", "replace"), u("7", "keep"), u("7", "replace")],  # all taken back
    *[r(BOT, "keep"), u(BOT, "replace")],  # the bot's own reactions never vote
    u("5", "keep"),  # removing a reaction one does not hold changes nothing
]
RULE = {"1": "keep", "2": "replace", "4": "replace", "5": "replace", "6": "keep"}

Driver = Callable[[list[React]], Awaitable[None]]
Opener = Callable[[tuple[VoteOption, ...]], Awaitable[None]]


def discord_wiring(handle: DebateHandle, options: tuple[VoteOption, ...]) -> tuple[Driver, Opener]:
    card = CardBallot("v1", options, handle)
    emoji = {o.key: o.emoji for o in options} | {"party": "🎉"}

    async def drive(steps: list[React]) -> None:
        for step in steps:
            if not is_person(int(step.person), is_bot=step.person == BOT, me=int(BOT)):
                continue  # the listener drops it
            if step.added:
                await card.reacted(step.person, f"person {step.person}", emoji[step.option])
            else:
                await card.unreacted(step.person, emoji[step.option])

    return drive, card.window_opened_for


def slack_wiring(handle: DebateHandle, options: tuple[VoteOption, ...]) -> tuple[Driver, Opener]:
    votes = HumanVotes(bot_user_id=BOT)
    votes.attach(handle)
    names = option_reactions(options) | {"party": "tada"}
    votes.card_posted("v1", "ts1", option_reactions(options))
    on_card: dict[str, list[str]] = {}

    async def drive(steps: list[React]) -> None:
        for step in steps:
            held = on_card.setdefault(step.person, [])
            name = names[step.option]
            if step.added and name not in held:
                held.append(name)
            elif not step.added and name in held:
                held.remove(name)
            await votes.reaction("ts1", step.person, name, added=step.added, at=None)

    async def opened(window: tuple[VoteOption, ...]) -> None:
        await votes.window_opened("v1", [o.key for o in window], on_card)  # as `reactions.get` says

    return drive, opened


Wiring = Callable[[DebateHandle, tuple[VoteOption, ...]], tuple[Driver, Opener]]


async def people_votes(tmp_path: Path, wiring: Wiring) -> dict[str, str]:
    seen: dict[str, str] = {}
    wired: list[tuple[Driver, Opener]] = []

    async def hook(rt: Runtime, handle: DebateHandle, event: Event) -> None:
        if isinstance(event, VotingStarted) and event.vote_id == "v1":
            wired.append(wiring(handle, event.options))
            await wired[0][0](EARLY)
        elif isinstance(event, HumanVoteOpened) and event.vote_id == "v1":
            drive, opened = wired[0]
            await opened(event.options)
            await drive(LIVE)
            seen.update({p: v.choice for p, v in handle.state.ballots["v1"].human_votes.items()})

    await run_debate(
        tmp_path,
        hook=hook,
        options={"rounds": 2, "exchanges_per_round": 1, "first_speaker": "ada", "humans": "vote"},
    )
    return seen


async def test_the_same_reactions_give_the_same_votes_on_both_platforms(tmp_path: Path) -> None:
    on_discord = await people_votes(tmp_path / "discord", discord_wiring)
    on_slack = await people_votes(tmp_path / "slack", slack_wiring)
    assert on_discord == on_slack == RULE
