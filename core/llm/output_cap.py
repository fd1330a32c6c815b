"""Capping a model's output through its provider's own parameter, so a budget's worst case holds.

The budget reserves `model.max_tokens[kind]` for every reply. That is a bound only when the provider
is told it: Anthropic, OpenAI, Groq, Mistral and most others take `max_tokens`; Gemini takes
`max_output_tokens`; Ollama takes `num_predict` among its options. A provider with none of these
cannot be held to a token or money budget, and is refused when one is set.
"""

from __future__ import annotations

from typing import Any


def cap_output(model: Any, max_tokens: int) -> bool:
    """Tell `model` to write at most `max_tokens` tokens; False when it offers no way to."""
    if hasattr(model, "max_tokens"):
        model.max_tokens = max_tokens
        return True
    if hasattr(model, "max_completion_tokens"):
        model.max_completion_tokens = max_tokens
        return True
    if hasattr(model, "max_output_tokens"):
        model.max_output_tokens = max_tokens
        return True
    if hasattr(model, "options"):  # Ollama: generation options, `num_predict` caps the reply
        options = dict(model.options or {})
        options["num_predict"] = max_tokens
        model.options = options
        return True
    return False
