"""The `scripted` provider: a real agno Model that replies from a script or with seeded placeholders.

It is the offline rehearsal mode and the test double. A script (YAML) maps a role name,
`persona:<id>` or `persona:<id>:<role>` to a list of replies; the most specific key wins. Each list
is consumed in order and its last entry repeats. A role's list is shared by every persona in that
role, in call order.

A reply is one of:
- a string: a spoken turn (or, for a structured call, raw text that will probably not parse);
- a mapping: a structured reply (an arena vote is `{vote: keep|replace, reason: ...}`);
- `{say: "text", delay: 2.5}`: a spoken turn with extra latency (seconds, on the debate's clock);
- `{error: "message"}`: the call fails with that message.

Without a matching script entry it writes deterministic, clearly labelled placeholder text and
seeded structured replies, generated from the requested JSON schema.
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from agno.metrics import MessageMetrics
from agno.models.base import Model
from agno.models.message import Message
from agno.models.response import ModelResponse
from pydantic import BaseModel

from core.clock import Clock, RealClock
from core.errors import ModelConfigError
from core.localfiles import LocalFileError, read_local_yaml
from core.words import quoted

ScriptItem = str | dict[str, Any]

_CONTROL_KEYS = {"error", "delay", "say"}


class ScriptedFailure(RuntimeError):
    """A failure the script asked for."""


class Script:
    """Replies by key, with one shared cursor per key (per debate)."""

    def __init__(self, entries: Mapping[str, list[ScriptItem]] | None = None) -> None:
        self.entries: dict[str, list[ScriptItem]] = {k: list(v) for k, v in (entries or {}).items()}
        self.cursors: dict[str, int] = {}

    @classmethod
    def load(cls, path: str | Path) -> Script:
        p = Path(path).expanduser()
        if not p.exists() and not p.is_symlink():
            raise ModelConfigError(f"Script file not found: {p}")
        try:  # only a regular file, bounded (core.localfiles); invalid YAML is one line
            raw = read_local_yaml(p, what="script file")
        except LocalFileError as exc:
            raise ModelConfigError(str(exc)) from None
        return cls.parse(raw, source=str(p))

    @classmethod
    def parse(cls, raw: Any, *, source: str = "script") -> Script:
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise ModelConfigError(f"{source}: a script maps roles or persona:<id> to lists of replies")
        entries: dict[str, list[ScriptItem]] = {}
        for key, value in raw.items():
            items = value if isinstance(value, list) else [value]
            if not items:
                raise ModelConfigError(f"{source}: {key!r} has an empty list of replies")
            for item in items:
                if not isinstance(item, str | dict):
                    raise ModelConfigError(
                        f"{source}: replies under {key!r} must be text or mappings, not {item!r}"
                    )
                if isinstance(item, dict):
                    _check_controls(item, f"{source}: a reply under {key!r}")
            entries[str(key)] = items
        return cls(entries)

    def copy(self) -> Script:
        """A fresh cursor set over the same replies (one per debate)."""
        return Script(self.entries)

    def key_for(self, persona_id: str, role: str) -> str | None:
        for key in (f"persona:{persona_id}:{role}", f"persona:{persona_id}", role):
            if key in self.entries:
                return key
        return None

    def next(self, persona_id: str, role: str) -> ScriptItem | None:
        key = self.key_for(persona_id, role)
        if key is None:
            return None
        items = self.entries[key]
        i = self.cursors.get(key, 0)
        self.cursors[key] = i + 1
        return items[min(i, len(items) - 1)]


_MAX_DELAY = 24 * 3600.0
_ASCII_BYTES = bytes(range(128))


def count_tokens(text: str) -> int:
    """The rehearsal's token count, shaped like a real tokenizer's: about four ASCII characters a
    token, and a token for each other character (CJK and the like run near one a character)."""
    if text.isascii():
        return len(text) // 4
    encoded = text.encode("utf-8", "surrogatepass")
    ascii_chars = len(encoded) - len(encoded.translate(None, _ASCII_BYTES))
    return ascii_chars // 4 + (len(text) - ascii_chars)


def _check_controls(item: dict[str, Any], where: str) -> None:
    """A reply's `delay` is a finite, non-negative number of seconds (no `.inf`, no `.nan`: they
    cannot be stored or waited out), and `say`/`error` are text."""
    if "delay" in item:
        delay = item["delay"]
        if isinstance(delay, bool) or not isinstance(delay, int | float) or not math.isfinite(delay):
            raise ModelConfigError(f"{where}: delay must be a number of seconds, not {delay!r}")
        if not 0 <= delay <= _MAX_DELAY:
            raise ModelConfigError(f"{where}: delay must be between 0 and {_MAX_DELAY:.0f} seconds")
    for name in ("say", "error"):
        if name in item and not isinstance(item[name], str):
            raise ModelConfigError(f"{where}: {name} must be text, not {item[name]!r}")


# Placeholder text for rehearsals. Labelled so nobody mistakes it for a model's argument.
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


def _chunks(text: str, words_per_chunk: int = 3) -> list[str]:
    words = text.split(" ")
    return [
        " ".join(words[i : i + words_per_chunk]) + (" " if i + words_per_chunk < len(words) else "")
        for i in range(0, len(words), words_per_chunk)
    ] or [""]


@functools.lru_cache(maxsize=64)  # council builds a schema per debate: keep it bounded
def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def _schema_of(response_format: Any) -> dict[str, Any] | None:
    if response_format is None:
        return None
    if isinstance(response_format, type) and issubclass(response_format, BaseModel):
        return _model_schema(response_format)
    if isinstance(response_format, dict):
        inner = response_format.get("json_schema", {}).get("schema")
        if isinstance(inner, dict):
            return inner
        return {}
    return {}


@dataclass
class ScriptedModel(Model):
    """Replies for one persona in one role. Latency is spent on the debate's clock."""

    id: str = "scripted"
    name: str = "Scripted"
    provider: str = "Scripted"
    supports_native_structured_outputs: bool = True
    persona_id: str = "persona"
    persona_name: str = "Persona"
    role: str = "speaker"
    topic: str = ""
    script: Script | None = None
    seed: int = 0
    latency: float = 0.0
    paced_by_reader: ClassVar[bool] = False
    """Each chunk `latency` after the reader asks for it, so a reader's stall delays every later
    chunk: the earlier pacing, kept for comparison (`bench/capacity.py --pacing reader`)."""
    clock: Clock = field(default_factory=RealClock)
    calls: int = 0  # calls made (a count only: keeping every prompt cost memory per debate)
    max_tokens: int | None = None
    """Replies are cut to this many tokens, as a provider's `max_tokens` would cut them."""

    def _next_reply(self, messages: list[Message], response_format: Any) -> tuple[str, float]:
        self.calls += 1
        n = self.calls
        rng = random.Random(f"{self.seed}|{self.persona_id}|{self.role}|{n}")
        item = self.script.next(self.persona_id, self.role) if self.script is not None else None
        schema = _schema_of(response_format)
        delay = 0.0
        if isinstance(item, dict):
            if "error" in item:
                raise ScriptedFailure(str(item["error"]))
            delay = float(item.get("delay", 0.0))
            if "say" in item:
                return str(item["say"]), delay
            data = {k: v for k, v in item.items() if k not in _CONTROL_KEYS}
            return json.dumps(data), delay
        if isinstance(item, str):
            return item, delay
        if schema is not None:
            return json.dumps(placeholder_structured(rng, schema, self.topic)), delay
        prompt = str(messages[-1].content or "") if messages else ""
        system = str(messages[0].content or "") if messages and messages[0].role == "system" else ""
        text = placeholder_text(
            rng, name=self.persona_name, role=self.role, topic=self.topic, prompt=prompt, system=system
        )
        return text, delay

    def skip(self) -> None:
        """A call answered from memory (a resumed debate): keep the script's place and the count."""
        self.calls += 1
        if self.script is not None:
            self.script.next(self.persona_id, self.role)

    @staticmethod
    def _usage(messages: list[Message], text: str) -> MessageMetrics:
        prompt = sum(count_tokens(str(m.content or "")) for m in messages)
        out = max(1, count_tokens(text))
        return MessageMetrics(input_tokens=prompt, output_tokens=out, total_tokens=prompt + out)

    def _capped(self, text: str) -> str:
        """`text` cut to `max_tokens`, as a real provider stops writing there (at a word's end)."""
        limit = self.max_tokens
        if limit is None or count_tokens(text) <= limit:
            return text
        ends = [m.end() for m in re.finditer(r"\S+", text)]
        low, high = 0, len(ends)  # the most words whose text still fits
        while low < high:
            mid = (low + high + 1) // 2
            if count_tokens(text[: ends[mid - 1]]) <= limit:
                low = mid
            else:
                high = mid - 1
        return text[: ends[low - 1]] if low else text[: max(1, limit)]

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise RuntimeError("the scripted model is async only: call Agent.arun")

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        raise RuntimeError("the scripted model is async only: call Agent.arun")

    async def ainvoke(
        self, messages: list[Message], assistant_message: Message, **kwargs: Any
    ) -> ModelResponse:
        text, delay = self._next_reply(messages, kwargs.get("response_format"))
        text = self._capped(text)
        await self.clock.sleep(delay + self.latency * len(_chunks(text)))
        return ModelResponse(role="assistant", content=text, response_usage=self._usage(messages, text))

    async def ainvoke_stream(
        self, messages: list[Message], assistant_message: Message, **kwargs: Any
    ) -> AsyncIterator[ModelResponse]:
        text, delay = self._next_reply(messages, kwargs.get("response_format"))
        text = self._capped(text)
        # Paced like a network stream: chunk k is due `delay + k * latency` after the call, whatever
        # the reader does meanwhile (a real server keeps sending; the bytes wait in the socket). A
        # reader that stalls (a store commit, a busy loop) gets the chunks that came due at once,
        # instead of pushing every later chunk back by its stall.
        due = self.clock.now() + delay
        if delay:
            await self.clock.sleep(due - self.clock.now())
        for piece in _chunks(text):
            if self.latency:
                due = (self.clock.now() if self.paced_by_reader else due) + self.latency
                await self.clock.sleep(due - self.clock.now())
            yield ModelResponse(role="assistant", content=piece)
        yield ModelResponse(response_usage=self._usage(messages, text))

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]
