"""How a debate ends: what it closes that was left open, its summary line, the status it stores."""

from __future__ import annotations

from core.events import Emit, TurnCompleted, VotingClosed
from core.formats.base import Outcome
from core.models import Statistics
from core.ports import DebateStatus
from core.state import DebateState
from core.voting import HumanBallots
from core.words import plural

STATUS_OF_REASON: dict[str, DebateStatus] = {
    "completed": "completed",
    "time_up": "completed",
    "max_rounds": "completed",
    "budget": "completed",
    "stopped": "stopped",
    "failed": "failed",
    "interrupted": "interrupted",
}

LEAVES_LOOSE_ENDS = ("stopped", "failed", "interrupted", "budget")
"""Endings that can come mid-turn or mid-vote."""


async def close_loose_ends(state: DebateState, ballots: HumanBallots, emit: Emit) -> None:
    """A stop or failure can leave a turn or a vote open; close them so front ends can too."""
    turn = state.open_turn
    if turn is not None:
        await emit(
            TurnCompleted(
                turn_id=turn.turn_id,
                speaker=turn.speaker,
                role=turn.role,
                round=turn.round,
                text=(turn.partial.strip() + " …").strip(),
                interrupted=True,
            )
        )
    ballot = state.open_ballot
    if ballot is not None:
        ballots.close(ballot.vote_id)
        tally: dict[str, float] = {o.key: 0 for o in ballot.options}
        for vote in ballot.ai_votes.values():
            tally[vote.choice] = tally.get(vote.choice, 0) + 1
        await emit(
            VotingClosed(
                vote_id=ballot.vote_id,
                tally=tally,
                human_tally=ballot.human_tally(),
                decision="none",
                decision_label="Vote cancelled: the debate ended",
            )
        )


def plain_summary(outcome: Outcome, stats: Statistics) -> str:
    """The closing line of a debate whose format gave no summary."""
    ending = {
        "stopped": "The debate was stopped",
        "failed": "The debate ended on an error",
    }.get(outcome.reason, "The debate ended")
    detail = f" ({outcome.detail})" if outcome.detail else ""
    return (
        f"{ending}{detail} after {plural(stats.turns, 'turn')} over {plural(stats.rounds, 'round')},"
        f" with {plural(stats.switches, 'speaker switch')}."
    )
