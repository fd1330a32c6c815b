"""The rehearsal's placeholder replies: deterministic, clearly labelled text and seeded structured
replies generated from the requested JSON schema, so nobody mistakes them for a model's argument."""

from __future__ import annotations

import random
import re
from typing import Any

from core.words import quoted

_OPENERS = [
    "Let me be direct.",
    "Two points.",
    "Consider this.",
    "Here is what matters.",
    "I'll answer that head on.",
    "Look closer.",
    "Start with the facts.",
    "Fair question.",
]
_FOR = [
    "The strongest case for “{topic}” is practical: the benefits land first where people need them.",
    "My opponent asks for certainty before change; no policy ever cleared that bar, the status quo included.",
    "Places that tried it did not collapse, and the complaints faded within a year.",
    "If the answer is no, I want to hear the alternative plan and the date it starts.",
    "We can adjust a reform as we go; we cannot get back the years spent waiting.",
    "The costs of doing nothing are real, they are just spread thin enough to ignore.",
    "Ask who carries the burden today: rarely the people defending the way things are.",
    "A clear rule is easier to live with than a thousand exceptions negotiated case by case.",
]
_AGAINST = [
    "Good intentions are not a plan: “{topic}” sounds simple until you ask who pays.",
    "The proposition cites success stories and skips the places that quietly reversed course.",
    "Blanket answers fail the people at the margins, the ones with the fewest alternatives.",
    "There is a cheaper, reversible path that gets most of the benefit without the damage.",
    "Every argument so far assumes compliance; people route around rules that ignore their lives.",
    "Change this large needs consent, and consent is built step by step, not declared.",
    "The numbers offered are averages; nobody lives an average life.",
    "Before we commit, show me the evidence that survives a hostile reading.",
]
_NEUTRAL = [
    "On “{topic}”, the honest answer weighs cost against fairness.",
    "The evidence points both ways; the question is which risk we would rather carry.",
    "A workable answer starts small, measures, and expands what works.",
    "Both sides agree on the goal; they disagree about the speed and who bears the cost.",
    "The strongest version of each position deserves a hearing before any verdict.",
    "What would change my mind is data from a comparable place, not another anecdote.",
]
_SUMMARY = [
    "The proposition pressed on cost and precedent; the opposition answered with fairness and reversibility.",
    "The floor changed hands when the observers wanted sharper answers, and the exchanges grew tighter.",
    "Neither side fully answered the other's best point, which is where the next debate should start.",
    "Takeaway: the motion is less about whether than about how fast and for whom.",
]
_REASONS = {
    "keep": [
        "The last answer engaged the opposition's point directly.",
        "Clear, concrete and on topic.",
        "Held the line under pressure.",
    ],
    "replace": [
        "The argument drifted and left the strongest objection standing.",
        "Repeated an earlier point without adding anything new.",
        "A fresh angle would serve the motion better now.",
    ],
    "": [
        "The strongest option on the evidence given.",
        "Weighed the trade-offs and this one holds up best.",
        "Closest to what the question actually asks.",
    ],
}
_SYNTHESIS = [
    "Drawing the panel together: the documents agree on the direction and differ on the cost.",
    "Where the sources overlap the answer is clear; where they diverge, the panel says so.",
    "The final answer: start where the evidence is strongest and measure before going further.",
]
_DOCUMENT = re.compile(r'<document name="[^"]*">\n(.*?)\n</document>', re.DOTALL)
_FOR_ROLES = {"proposition", "proposer", "for"}
_AGAINST_ROLES = {"opposition", "critic", "against"}
_SUMMARY_ROLES = {"moderator", "synthesiser", "judge"}


def _quotable(document: str, rng: random.Random) -> str | None:
    sentences = [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+|\n+", document)]
    usable = [s.strip("# ") for s in sentences if len(s.split()) >= 5]
    return rng.choice(usable) if usable else None


def placeholder_text(
    rng: random.Random, *, name: str, role: str, topic: str, prompt: str = "", system: str = ""
) -> str:
    """Rehearsal text. The prompt only picks the kind of reply (a question, a distillation, a quote)."""
    motion = quoted(topic or "the motion")
    if role == "synthesiser":
        return f"[rehearsal] {' '.join(_SYNTHESIS)}"
    found = _DOCUMENT.search(system)
    if role == "panellist" and found is not None:
        quote = _quotable(found.group(1), rng)
        if quote is not None:
            return f'[rehearsal] My document puts it plainly: "{quote}" That is where my answer starts.'

    if "focus question" in prompt and "question only" in prompt:
        return f"[rehearsal] On {motion}: who gains, who pays, and how would we know?"
    if "Distil the round" in prompt:
        return (
            "[rehearsal] Both sides accept the problem is real; they split on cost and on who carries it."
            f" Sharper question, on {motion}: what evidence would settle it within a year?"
        )
    if role in _SUMMARY_ROLES:
        body = " ".join(_SUMMARY)
        return f"[rehearsal] {name}'s summary. {body}"
    bank = _FOR if role in _FOR_ROLES else _AGAINST if role in _AGAINST_ROLES else _NEUTRAL
    first, second = rng.sample(bank, 2)
    body = f"{rng.choice(_OPENERS)} {first} {second}".replace("{topic}", topic or "the motion")
    return f"[rehearsal] {body}"


def placeholder_structured(rng: random.Random, schema: dict[str, Any], topic: str = "") -> dict[str, Any]:
    """A valid instance of a (simple) JSON schema: enums chosen by the seeded RNG."""
    defs = schema.get("$defs", {})
    chosen: list[str] = []  # the choices made so far, so a reason can agree with its vote

    def value(prop: dict[str, Any], name: str) -> Any:
        if "$ref" in prop:
            return value(defs[prop["$ref"].split("/")[-1]], name)
        if "enum" in prop:
            picked = rng.choice(prop["enum"])
            chosen.append(str(picked))
            return picked
        if "const" in prop:
            return prop["const"]
        if "anyOf" in prop:
            options = [p for p in prop["anyOf"] if p.get("type") != "null"]
            return value(options[0], name) if options else None
        kind = prop.get("type")
        if kind == "string":
            if "reason" in name:
                bank = next((_REASONS[c] for c in reversed(chosen) if c in _REASONS), _REASONS[""])
                return f"[rehearsal] {rng.choice(bank)}"
            return f"[rehearsal] {name}"
        if kind == "integer":
            return int(prop.get("minimum", 0))
        if kind == "number":
            return float(prop.get("minimum", 0))
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "array":
            items = prop.get("items", {})
            count = max(int(prop.get("minItems", 0)), min(3, int(prop.get("maxItems", 3))))
            if items.get("type") == "string":
                subject = (topic or "the subject").rstrip("?.!")
                return [f"[rehearsal] Question {i} on {subject}?" for i in range(1, count + 1)]
            return [value(items, name) for _ in range(count)]
        if kind == "object":
            return {k: value(v, k) for k, v in prop.get("properties", {}).items()}
        return None

    return {k: value(v, k) for k, v in schema.get("properties", {}).items()}
