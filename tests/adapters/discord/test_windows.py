"""A people's window on Discord starts when people can act on it: its card shows the ballot
(reactions or buttons) and the countdown, under Discord's real rate limits (the loopback fake, real
time) and with the AI votes' card edits competing for the thread's edits."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from core.events import HumanVoteOpened, VotingClosed
from testkit.discord_rest import Limits, Request
from testkit.discord_world import SCRIPT, arena

WINDOW = 10.0
FOUR_OBSERVERS = {
    **SCRIPT,
    "observer": [{"vote": v, "reason": "Clear."} for v in ("keep", "keep", "replace", "keep")],
}


def _card_of(req: Request) -> bool:
    return any("🗳️" in (e.get("title") or "") for e in req.body.get("embeds") or [])


def _visible_at(requests: list[Request], *, buttons: bool) -> float:
    """When the card first showed the open window's countdown and its ballot (monotonic time)."""
    countdown = min(
        r.at
        for r in requests
        if r.method in ("POST", "PATCH")
        and r.status == 200
        and _card_of(r)
        and any("voting closes <t:" in (e.get("description") or "") for e in r.body["embeds"])
    )
    if buttons:
        ballot = min(r.at for r in requests if r.method == "PATCH" and r.body.get("components"))
    else:
        ballot = max(r.at for r in requests if r.method == "PUT" and "/reactions/" in r.path)
    return max(countdown, ballot)


@pytest.mark.slow
@pytest.mark.parametrize("ballot", ["reactions", "buttons"])
async def test_the_countdown_and_the_ballot_are_visible_when_the_window_starts(
    tmp_path: Path, ballot: str
) -> None:
    async with arena(
        tmp_path,
        rest=Limits(),  # Discord's published limits, in real time
        script=FOUR_OBSERVERS,
        discord={"ballot": ballot},
    ) as world:
        ran = await world.run(humans="vote", human_window=WINDOW)
        events: list[Any] = await world.rt.store.events(ran.handle.debate_id)
        requests = world.lb.api.requests
        visible = _visible_at(requests, buttons=ballot == "buttons") + time.time() - time.monotonic()
    [opened] = [e for e in events if isinstance(e, HumanVoteOpened)]
    [closed] = [e for e in events if isinstance(e, VotingClosed)]
    votes = [e for e in events if e.kind == "vote_cast"]
    assert len(votes) == 4  # four AI votes edited the card around the window's opening
    left = (opened.at.timestamp() + WINDOW - visible) / WINDOW
    assert left >= 0.95, f"{left:.0%} of the window left when people could first act"
    assert closed.at.timestamp() >= visible + WINDOW - 0.05  # and the clock started only then
