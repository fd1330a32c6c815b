"""Budgets hold for any script and any language: non-Latin text is priced conservatively, and every
model's replies are capped through its provider's own parameter (the rehearsal model included)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.llm.output_cap import cap_output
from core.llm.scripted import count_tokens
from core.token_estimate import estimate_tokens
from tests.core.runs import run_debate
from tests.core.test_budget import FORMATS

SAMPLES = {
    "english": "Streets are for people, not for parked cars. ",
    "chinese": "城市应该禁止汽车吗？街道属于行人，而不是停放的汽车。",
    "japanese": "都市は車を禁止すべきか。通りは人のためのものだ。",
    "russian": "Улицы для людей, а не для припаркованных машин. ",
    "emoji": "🚗🚲🚶‍♀️🌆 ",
    "arabic": "الشوارع للناس وليست للسيارات المتوقفة. ",
}


@given(st.text(min_size=0, max_size=400))
def test_the_estimate_never_falls_below_what_the_rehearsal_model_counts(text: str) -> None:
    assert estimate_tokens(text) >= count_tokens(text)


def test_cjk_text_is_priced_per_byte_not_per_three_characters() -> None:
    text = SAMPLES["chinese"] * 10
    assert estimate_tokens(text) >= len(text)  # at least a token a character
    assert estimate_tokens("abc" * 100) == 100  # ASCII as before


async def test_the_rehearsal_model_stops_at_max_tokens(tmp_path: Path) -> None:
    long = "word " * 5000
    run = await run_debate(
        tmp_path,
        fmt="council",
        script={"council": [long]},
        options={"rounds": 1, "humans": "off"},
        model={"max_tokens": {"turn": 120, "vote": 200, "summary": 200}},
        limits={"max_tokens_per_debate": 0},
    )
    assert run.turns()
    assert all(count_tokens(t.text) <= 120 for t in run.turns())
    assert all(len(t.text) < len(long) for t in run.turns())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    fmt=st.sampled_from(sorted(FORMATS)),
    language=st.sampled_from(sorted(SAMPLES)),
    repeat=st.integers(min_value=5, max_value=80),
    budget=st.integers(min_value=2_000, max_value=15_000),
)
async def test_usage_never_goes_above_the_ceiling(fmt: str, language: str, repeat: int, budget: int) -> None:
    reply = SAMPLES[language] * repeat
    given_format = FORMATS[fmt]
    script: dict[str, Any] = {
        role: [reply if isinstance(first, str) else first]
        for role, (first, *_) in given_format["script"].items()
    }
    with tempfile.TemporaryDirectory() as here:
        run = await run_debate(
            Path(here),
            fmt=fmt,
            topic=given_format.get("topic", "Should cities ban cars?"),
            script=script,
            options=given_format["options"],
            limits={"max_tokens_per_debate": budget, "max_rounds": 200},
        )
    assert run.result.stats.tokens.total <= budget, (fmt, language, repeat, budget)


@dataclass
class _GeminiShaped:  # the parameter agno's Gemini takes
    max_output_tokens: int | None = None


@dataclass
class _OllamaShaped:  # agno's Ollama: generation options
    options: dict[str, Any] | None = None


@dataclass
class _Uncappable:
    temperature: float | None = None


def test_each_provider_is_capped_through_its_own_parameter() -> None:
    from agno.models.anthropic import Claude

    claude = Claude(id="claude-x", api_key="offline")
    assert cap_output(claude, 321) and claude.max_tokens == 321
    gemini = _GeminiShaped()
    assert cap_output(gemini, 99) and gemini.max_output_tokens == 99
    ollama = _OllamaShaped(options={"temperature": 0.2})
    assert cap_output(ollama, 77) and ollama.options == {"temperature": 0.2, "num_predict": 77}
    assert not cap_output(_Uncappable(), 10)


@pytest.mark.parametrize("language", ["chinese", "japanese"])
async def test_a_panel_on_cjk_documents_stays_within_its_budget(tmp_path: Path, language: str) -> None:
    given_format = FORMATS["panel"]
    docs = [
        doc.model_copy(update={"text": SAMPLES[language] * 200})
        for doc in given_format["options"]["documents"]
    ]
    run = await run_debate(
        tmp_path,
        fmt="panel",
        topic=given_format["topic"],
        script={"panellist": [SAMPLES[language] * 60], "synthesiser": [SAMPLES[language] * 60]},
        options={**given_format["options"], "documents": docs},
        limits={"max_tokens_per_debate": 30_000, "max_rounds": 200},
    )
    assert run.result.stats.tokens.total <= 30_000
