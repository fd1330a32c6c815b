"""Reactions → one vote per person: the newest counts, removing it withdraws it."""

from __future__ import annotations

from adapters.discord.ballots import ReactionBallot
from core.formats.arena import OPTIONS


def test_a_newer_reaction_replaces_the_older() -> None:
    ballot = ReactionBallot(OPTIONS)
    assert ballot.added("1", "✅", "alice") == "keep"
    assert ballot.added("1", "❌", "alice") == "replace"
    assert ballot.current() == {"1": ("replace", "alice")}


def test_removing_the_vote_withdraws_it_but_removing_an_older_reaction_does_not() -> None:
    ballot = ReactionBallot(OPTIONS)
    ballot.added("1", "✅", "alice")
    ballot.added("1", "❌", "alice")
    assert ballot.removed("1", "✅") is False
    assert ballot.current() == {"1": ("replace", "alice")}
    assert ballot.removed("1", "❌") is True
    assert ballot.current() == {}


def test_other_emojis_are_not_votes() -> None:
    ballot = ReactionBallot(OPTIONS)
    assert ballot.added("1", "🎉", "alice") is None
    assert ballot.removed("1", "🎉") is False
    assert ballot.current() == {}


def test_emoji_variation_selectors_do_not_matter() -> None:
    ballot = ReactionBallot(OPTIONS)
    assert ballot.added("1", "✅\ufe0f", "alice") == "keep"
