"""Prompts of the arena format."""

from __future__ import annotations

from core.prompts.common import SUMMARY_WORDS, TURN_WORDS, excerpt


def arena_proposition_turn(context: str, *, round_no: int, last_opposition: tuple[str, str] | None) -> str:
    if last_opposition is None:
        task = "Open the case for the motion with your strongest argument."
    else:
        name, text = last_opposition
        task = (
            f"The opposition ({name}) just said: “{excerpt(text)}”\n"
            "Answer that point directly first, then advance one new argument for the motion."
        )
    return (
        f"{context}\n\nRound {round_no}. You speak FOR the motion, as the proposition.\n{task}\n"
        f"About {TURN_WORDS} words."
    )


def arena_opposition_turn(context: str, *, round_no: int, last_proposition: tuple[str, str] | None) -> str:
    if last_proposition is None:
        task = "Open the case against the motion with your strongest argument."
    else:
        name, text = last_proposition
        task = (
            f"The proposition ({name}) just said: “{excerpt(text)}”\n"
            "Rebut it, then press one reason against the motion."
        )
    return (
        f"{context}\n\nRound {round_no}. You speak AGAINST the motion, as the opposition.\n{task}\n"
        f"About {TURN_WORDS} words."
    )


def arena_vote(recent: str, *, speaker: str, count: int) -> str:
    return (
        f"Recent exchanges (the last {count} messages):\n{recent}\n\n"
        f"You are an observer of this debate. {speaker} currently holds the floor for the motion. "
        f"Judge only {speaker}'s recent performance: did they answer the opposition and move the case "
        "forward?\n"
        f'Decide "keep" ({speaker} keeps the floor) or "replace" (another proposition speaker takes '
        "over), and give one sentence of reasoning."
    )


def arena_summary(context: str, *, ending: str, figures: str) -> str:
    return (
        f"The debate is over: {ending}.\n\nFigures:\n{figures}\n\n{context}\n\n"
        "You are the moderator. Write the closing summary: the strongest point made for and against "
        "the motion, how the floor changed hands and why, and a one-line takeaway. "
        f"Do not declare a winner. About {SUMMARY_WORDS} words."
    )
