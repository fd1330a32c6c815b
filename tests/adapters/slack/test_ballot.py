"""Reactions as votes: names normalised, one vote per person, newest wins, removal withdraws."""

from adapters.slack.ballot import ReactionLedger
from adapters.slack.emoji import normalise_reaction, option_reactions
from core.models import VoteOption

KEEP = VoteOption(key="keep", label="Keep", emoji="✅")
REPLACE = VoteOption(key="replace", label="Replace", emoji="❌")
FOR = VoteOption(key="for", label="For", emoji="👍")
AGAINST = VoteOption(key="against", label="Against", emoji="👎")
ODD = VoteOption(key="maybe", label="Maybe", emoji="🫠")


def test_reaction_names_are_normalised() -> None:
    assert normalise_reaction("+1::skin-tone-3") == "+1"
    assert normalise_reaction("thumbsup") == "+1"
    assert normalise_reaction("thumbsdown::skin-tone-6") == "-1"
    assert normalise_reaction("white_check_mark") == "white_check_mark"


def test_options_map_to_reactions_with_a_numbered_fallback() -> None:
    assert option_reactions([KEEP, REPLACE]) == {"keep": "white_check_mark", "replace": "x"}
    assert option_reactions([FOR, AGAINST, ODD]) == {"for": "+1", "against": "-1", "maybe": "three"}


def test_newest_reaction_wins_and_removal_falls_back_then_withdraws() -> None:
    ledger = ReactionLedger(option_reactions([KEEP, REPLACE]))
    assert ledger.added("U1", "white_check_mark")
    assert ledger.choice("U1") == "keep"
    assert ledger.added("U1", "x")
    assert ledger.choice("U1") == "replace"
    assert ledger.removed("U1", "x")
    assert ledger.choice("U1") == "keep"  # the ✅ is still on the card
    assert ledger.removed("U1", "white_check_mark")
    assert ledger.choice("U1") is None
    assert not ledger.added("U1", "fire")  # not a vote
    assert ledger.choices() == {}


def test_skin_tones_count_as_the_same_vote() -> None:
    ledger = ReactionLedger(option_reactions([FOR, AGAINST]))
    ledger.added("U1", "+1::skin-tone-2")
    ledger.added("U2", "thumbsdown")
    assert ledger.choices() == {"U1": "for", "U2": "against"}
    ledger.removed("U1", "+1::skin-tone-2")
    assert ledger.choices() == {"U2": "against"}


def test_reconcile_takes_the_card_and_keeps_known_order() -> None:
    ledger = ReactionLedger(option_reactions([KEEP, REPLACE]))
    ledger.added("U1", "x")
    ledger.added("U1", "white_check_mark")  # U1: keep is newest
    ledger.added("U9", "x")  # U9 removed it while we weren't listening
    ledger.reconcile({"U1": ["white_check_mark", "x"], "U2": ["x", "fire"], "U3": ["fire"]})
    assert ledger.choices() == {"U1": "keep", "U2": "replace"}


def test_during_a_tie_among_some_options_only_those_reactions_count() -> None:
    one, two, three = (VoteOption(key=f"p{i}", label=f"P{i}", emoji=e) for i, e in enumerate("123", 1))
    ledger = ReactionLedger(option_reactions([one, two, three]))
    assert option_reactions([one, two, three]) == {"p1": "one", "p2": "two", "p3": "three"}
    ledger.added("U1", "one")
    ledger.added("U1", "two")  # U1's newest reaction is for a proposal outside the tie
    ledger.added("U2", "two")
    ledger.open_only(["p1", "p3"])
    assert ledger.choices() == {"U1": "p1"}
    ledger.added("U2", "three")
    assert ledger.choices() == {"U1": "p1", "U2": "p3"}
    ledger.open_only(None)
    assert ledger.choices() == {"U1": "p2", "U2": "p3"}
