"""How many tokens a prompt may take at most, for budgets that must hold whatever the language.

ASCII text is counted at three characters a token (English runs near four); every other character at
one token per UTF-8 byte, which a byte-level tokenizer never exceeds, so Chinese, Japanese, Korean,
Cyrillic or emoji cannot overrun a ceiling that English fits.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 3
_ASCII = bytes(range(128))


def estimate_tokens(text: str) -> int:
    """Tokens `text` may take at most."""
    if text.isascii():
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    encoded = text.encode("utf-8", "surrogatepass")
    wide = len(encoded.translate(None, _ASCII))
    return math.ceil((len(encoded) - wide) / CHARS_PER_TOKEN) + wide
