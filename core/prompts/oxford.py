"""Prompts of the oxford format."""

from __future__ import annotations

from core.prompts.common import TURN_WORDS, excerpt

_CITE = (
    "You may research the question with your web tools (at most {calls} calls). Cite what you use as"
    " Markdown links [claim](https://url) to pages your tools returned; never invent a URL."
)


def opening(*, topic: str) -> str:
    return (
        f"The motion is: “{topic}”\n\n"
        "You are the moderator. Before the debate begins, turn the motion into one sharp focus question"
        " that both sides must answer: specific, contestable, and fair to both. Reply with the question"
        " only, in one sentence."
    )


def proposer_turn(
    context: str, *, focus: str, round_no: int, last_critic: tuple[str, str] | None, research_calls: int
) -> str:
    if last_critic is None:
        task = "Open the case for the motion with your strongest argument."
    else:
        name, text = last_critic
        task = (
            f"The critic ({name}) just said: “{excerpt(text)}”\n"
            "Engage that turn directly first, then advance the case for the motion."
        )
    research = "\n" + _CITE.format(calls=research_calls) if research_calls else ""
    return (
        f"{context}\n\nThe focus question: {focus}\n\nRound {round_no}. You are the proposer: you argue FOR"
        f" the motion.\n{task}{research}\nAbout {TURN_WORDS} words."
    )


def critic_turn(
    context: str, *, focus: str, round_no: int, last_proposer: tuple[str, str], research_calls: int
) -> str:
    name, text = last_proposer
    research = "\n" + _CITE.format(calls=research_calls) if research_calls else ""
    return (
        f"{context}\n\nThe focus question: {focus}\n\nRound {round_no}. You are the critic: you argue AGAINST"
        f" the motion.\nThe proposer ({name}) just said: “{excerpt(text)}”\n"
        "First steelman the proposer's position: state its strongest version in one or two sentences,"
        f" fairly enough that they would agree. Then attack it.{research}\nAbout {TURN_WORDS} words."
    )


def distillation(context: str, *, focus: str, round_no: int) -> str:
    return (
        f"{context}\n\nThe focus question: {focus}\n\nRound {round_no} is over. You are the moderator."
        " Distil the round: where the two sides now agree, where they still disagree, and then pose one"
        " sharper follow-up question for the next round. Take no side. About 90 words."
    )


def judge(transcript: str, *, focus: str, round_no: int, side_a: str, must_rule: bool) -> str:
    side_b = "critic (against the motion)" if side_a.startswith("proposer") else "proposer (for the motion)"
    ending = (
        "This is the last round: you must give a verdict now (decision: verdict)."
        if must_rule
        else "Decide whether the debate should continue for another round or is ready for a verdict."
    )
    return (
        f"The focus question: {focus}\n\n{transcript}\n\n"
        f"You are the judge after round {round_no}. The speakers are anonymised: Side A is the {side_a};"
        f" Side B is the {side_b}. Judge the arguments, not the speakers, and ignore who spoke first.\n"
        f"{ending}\nWhen you give a verdict, the winner is proposer, critic or draw, with your reasoning"
        " in a few sentences (what would have changed the ruling)."
    )
