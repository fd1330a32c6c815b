"""Prompts of the council format. The topic is the question the council answers."""

from __future__ import annotations

from collections.abc import Sequence

from core.prompts.common import TURN_WORDS, excerpt

Entry = tuple[str, str, str]
"""A proposal as prompts show it: (ballot key, proposer's name, text)."""


def _listing(proposals: Sequence[Entry], limit: int) -> str:
    return "\n\n".join(f"{key} — {name}: “{excerpt(text, limit)}”" for key, name, text in proposals)


def proposal(*, question: str, members: int) -> str:
    return (
        f"You sit on a council of {members} members. The question before the council: “{question}”\n\n"
        "Round 0: every member proposes at once. Write your proposal: a concrete, self-contained answer"
        " the council could adopt as it stands. Open with the proposal itself in one sentence, then give"
        f" the two strongest reasons for it. About {TURN_WORDS} words."
    )


def revision(
    *,
    question: str,
    round_no: int,
    rounds: int,
    own: str | None,
    others: Sequence[tuple[str, str]],
    limit: int,
) -> str:
    """`own` is the member's latest proposal in full (None if theirs never came through); `others`
    are (name, latest proposal) of the other members, each trimmed to `limit` characters."""
    listing = "\n\n".join(f"{name}: “{excerpt(text, limit)}”" for name, text in others)
    mine = f"Your current proposal:\n“{own}”" if own else "Your proposal has not come through yet."
    return (
        f"The question before the council: “{question}”\n\n"
        f"{mine}\n\n"
        f"The other members' latest proposals (trimmed):\n{listing or '(none yet)'}\n\n"
        f"Round {round_no} of {rounds}: critique and revise. Write your revised proposal in full, as the"
        " council should vote on it. Take what is strong in the others, drop what does not hold up, or"
        " hold your ground; say in one sentence what you took or rejected and why."
        f" About {TURN_WORDS} words."
    )


def vote(*, question: str, proposals: Sequence[Entry], own_key: str | None, limit: int) -> str:
    keys = ", ".join(key for key, _, _ in proposals)
    own = (
        f" Your own proposal is {own_key}; vote for it only if you honestly judge it the best."
        if own_key
        else ""
    )
    return (
        f"The question before the council: “{question}”\n\n"
        f"The final proposals:\n\n{_listing(proposals, limit)}\n\n"
        f"Vote for the proposal that best answers the question ({keys}).{own}"
        ' Choose "abstain" if none of them deserves adoption or you cannot choose.'
        " Give one sentence of reasoning."
    )


def moderator_pick(*, question: str, proposals: Sequence[Entry], votes: str, limit: int) -> str:
    keys = ", ".join(key for key, _, _ in proposals)
    return (
        f"The question before the council: “{question}”\n\n"
        f"The final proposals:\n\n{_listing(proposals, limit)}\n\n"
        f"How the members voted (advice, not binding):\n{votes}\n\n"
        f"You chair this council and decide. Choose the one proposal the council adopts ({keys}) and"
        " give one or two sentences of reasoning."
    )
