"""Reactions → one vote per person: the newest counts, removing it withdraws it."""

from __future__ import annotations

from adapters.discord.ballots import ReactionBallot
from core.formats.arena import OPTIONS
from core.models import VoteOption


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


def _council_options() -> tuple[VoteOption, ...]:
    return tuple(VoteOption(key=f"p{i}", label=f"Proposal {i}", emoji=f"{i}\ufe0f\u20e3") for i in (1, 2, 3))


def test_a_reaction_on_an_option_not_open_is_no_vote_and_replaces_none() -> None:
    ballot = ReactionBallot(_council_options())
    ballot.narrow(["p1", "p3"])  # a tie between 1 and 3
    assert ballot.added("1", "3\ufe0f\u20e3", "alice") == "p3"
    assert ballot.added("1", "2\ufe0f\u20e3", "alice") is None
    assert ballot.current() == {"1": ("p3", "alice")}
    assert ballot.removed("1", "2\ufe0f\u20e3") is False
    assert ballot.removed("1", "3\ufe0f\u20e3") is True
    assert ballot.current() == {}


def test_when_a_tie_narrows_the_options_a_vote_falls_back_to_an_open_reaction() -> None:
    ballot = ReactionBallot(_council_options())
    ballot.added("1", "3\ufe0f\u20e3", "alice")
    ballot.added("1", "2\ufe0f\u20e3", "alice")  # newest, before the window
    ballot.added("2", "2\ufe0f\u20e3", "bob")
    ballot.narrow(["p1", "p3"])
    assert ballot.current() == {"1": ("p3", "alice")}


def test_after_a_restart_the_stored_vote_stands_while_its_reaction_is_there() -> None:
    ballot = ReactionBallot(OPTIONS)
    ballot.restore("1", "alice", ["✅", "❌"], voted="replace")
    ballot.restore("2", "bob", ["✅"], voted="replace")  # took ❌ back while the bot was away
    ballot.restore("3", "carol", ["❌"], voted=None)  # reacted while the bot was away
    assert ballot.current() == {"1": ("replace", "alice"), "2": ("keep", "bob"), "3": ("replace", "carol")}
    assert ballot.removed("1", "❌") is True
    assert "1" not in ballot.current()
