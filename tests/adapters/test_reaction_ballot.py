"""The one reaction-ballot rule: newest reaction still on the card is the vote."""

from __future__ import annotations

from adapters.reaction_ballot import ReactionBallot


def test_keep_then_replace_then_remove_replace_leaves_keep() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    ballot.added("u", "keep")
    ballot.added("u", "replace")
    assert ballot.choice("u") == "replace"
    assert ballot.removed("u", "replace")
    assert ballot.choice("u") == "keep"
    assert ballot.removed("u", "keep")
    assert ballot.choices() == {}


def test_unknown_options_and_unheld_removals_change_nothing() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    assert not ballot.added("u", "party")
    assert not ballot.removed("u", "keep")
    assert ballot.choices() == {}


def test_only_open_options_count_and_the_vote_falls_back_to_an_open_one() -> None:
    ballot = ReactionBallot(["p1", "p2", "p3"])
    ballot.added("u", "p3")
    ballot.added("u", "p2")
    ballot.open_only(["p1", "p3"])
    assert ballot.choice("u") == "p3"
    ballot.open_only(None)
    assert ballot.choice("u") == "p2"


def test_reconcile_keeps_known_order_prefers_the_vote_on_record_then_the_earliest_option() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    ballot.added("a", "replace")
    ballot.added("a", "keep")
    ballot.reconcile(
        {"a": ["keep", "replace"], "b": ["keep", "replace"], "c": ["keep", "replace"], "d": ["party"]},
        voted={"b": "replace"},
    )
    assert ballot.choices() == {"a": "keep", "b": "replace", "c": "keep"}
