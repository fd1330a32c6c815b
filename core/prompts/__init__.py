"""Every prompt the formats send, in one place (one module per format).

System prompts hold only what is stable for a persona during a debate (persona, rules, motion), so
providers can cache them; everything that changes turn by turn goes in the user message.
"""

from core.prompts.common import SUMMARY_WORDS, TURN_WORDS, excerpt, persona_system

__all__ = ["SUMMARY_WORDS", "TURN_WORDS", "excerpt", "persona_system"]
