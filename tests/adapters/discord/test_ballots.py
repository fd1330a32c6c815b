"""Discord's emoji → the card's options (the rule itself: tests/adapters/test_reaction_ballot.py)."""

from __future__ import annotations

from adapters.discord.ballots.reactions import EmojiKeys
from core.formats.arena import OPTIONS
from core.models import VoteOption


def test_the_options_emoji_name_their_keys_and_other_emoji_none() -> None:
    keys = EmojiKeys(OPTIONS)
    assert keys.key_of("✅") == "keep"
    assert keys.key_of("❌") == "replace"
    assert keys.key_of("🎉") is None


def test_emoji_variation_selectors_do_not_matter() -> None:
    keycaps = EmojiKeys(VoteOption(key=f"p{i}", label=f"P{i}", emoji=f"{i}\ufe0f\u20e3") for i in (1, 2))
    assert EmojiKeys(OPTIONS).key_of("✅\ufe0f") == "keep"
    assert keycaps.key_of("2\u20e3") == "p2"
